// Package sqlitetest opens the SQLite store that tests in other packages run the room
// service on: a new file in the test's temporary directory, closed when the test ends.
package sqlitetest

import (
	"path/filepath"
	"testing"

	"github.com/parleyhq/parley/sqlite"
)

// Open opens a store on a new file in tb's temporary directory, with opts, and closes it when
// tb ends.
func Open(tb testing.TB, opts ...sqlite.Option) *sqlite.Store {
	tb.Helper()
	st, err := sqlite.Open(tb.Context(), filepath.Join(tb.TempDir(), "parley.db"), opts...)
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}
