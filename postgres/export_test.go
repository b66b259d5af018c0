package postgres

import "time"

// SetListenPing sets how long listeners stay quiet before a ping, for stores opened after the
// call, and returns a function that restores it.
func SetListenPing(d time.Duration) (restore func()) {
	old := listenPing
	listenPing = d
	return func() { listenPing = old }
}
