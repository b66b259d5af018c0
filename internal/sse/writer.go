// Package sse writes Server-Sent Event streams that are held by parley.RoomService.Hold, for
// the HTTP API's event stream and the web UI's live stream alike.
package sse

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/parleyhq/parley"
)

// Writer writes an event stream held by RoomService.Hold. Each write has WriteWait to
// complete; the end of the hold (a revocation or rotation, the client leaving) interrupts a
// write in progress at once and refuses later ones, so that a client that stopped reading
// cannot keep a revoked token's stream open until the write deadline.
type Writer struct {
	ctx  context.Context
	w    http.ResponseWriter
	rc   *http.ResponseController
	mu   sync.Mutex // orders deadline changes: a send's, and the interruption's
	stop func() bool
	done bool // set under mu once the handler is finishing: no interruption after that

	farewell bool // set under mu once the farewell comment was written: it is written once
}

// WriteWait bounds one write to an event stream: a reader that stops reading is dropped
// instead of pinning a goroutine and a connection for ever.
const WriteWait = 30 * time.Second

// InterruptGrace is how long a write already under way may still take once the hold ends.
const InterruptGrace = 100 * time.Millisecond

// NewWriter returns a Writer for w, interrupted as soon as ctx (the hold's context) ends.
func NewWriter(ctx context.Context, w http.ResponseWriter) *Writer {
	sw := &Writer{ctx: ctx, w: w, rc: http.NewResponseController(w)}
	sw.stop = context.AfterFunc(ctx, func() {
		sw.mu.Lock()
		defer sw.mu.Unlock()
		if !sw.done {
			// Not now: a write under way to a client that reads would break the
			// connection, and with it the farewell that says why the stream ends. A
			// write that is still blocked after the grace is one to a client that has
			// stopped reading, and is cut.
			_ = sw.rc.SetWriteDeadline(time.Now().Add(InterruptGrace))
		}
	})
	return sw
}

// Send writes and flushes b; false when the stream is over.
func (sw *Writer) Send(b []byte) bool {
	sw.mu.Lock()
	if sw.ctx.Err() != nil {
		sw.mu.Unlock()
		return false
	}
	_ = sw.rc.SetWriteDeadline(time.Now().Add(WriteWait))
	sw.mu.Unlock()
	if _, err := sw.w.Write(b); err != nil {
		return false
	}
	return sw.rc.Flush() == nil
}

// Farewell ends a stream whose token stopped working (err is EUNAUTHORIZED) with a comment
// line saying why, for a person reading the raw stream; programs learn it from the 401 of
// their reconnect. It gives the write a second at most, and writes once however often it is
// called.
func (sw *Writer) Farewell(err error) {
	if parley.ErrorCode(err) != parley.EUNAUTHORIZED {
		return
	}
	sw.mu.Lock()
	if sw.farewell {
		sw.mu.Unlock()
		return
	}
	sw.farewell = true
	sw.done = true
	_ = sw.rc.SetWriteDeadline(time.Now().Add(time.Second))
	sw.mu.Unlock()
	if _, err := sw.w.Write([]byte(": " + strings.ReplaceAll(parley.ErrorMessage(err), "\n", " ") + "\n\n")); err == nil {
		_ = sw.rc.Flush()
	}
}

// FarewellIfEnded writes the farewell when ctx ended because its hold did (the token was
// revoked or rotated), whatever the handler was doing then; it reports whether it did.
func (sw *Writer) FarewellIfEnded(ctx context.Context) bool {
	cause := context.Cause(ctx)
	if parley.ErrorCode(cause) != parley.EUNAUTHORIZED {
		return false
	}
	sw.Farewell(cause)
	return true
}

// Close stops watching the hold and clears the write deadline, which would otherwise pass
// on to the next request on a kept-alive connection.
func (sw *Writer) Close() {
	sw.stop()
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.done = true
	_ = sw.rc.SetWriteDeadline(time.Time{})
}
