package room

import (
	"path/filepath"
	"testing"

	"github.com/parleyhq/parley/sqlite"
)

// tempSQLite opens a SQLite store in a new file of tb's temporary directory, closed when tb
// ends.
func tempSQLite(tb testing.TB) *sqlite.Store {
	tb.Helper()
	st, err := sqlite.Open(tb.Context(), filepath.Join(tb.TempDir(), "db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}
