package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/sqlite"
	"github.com/parleyhq/parley/storetest"
)

// MustOpen opens a store on a new file in t's temp dir and closes it with t.Cleanup.
func MustOpen(tb testing.TB) *sqlite.Store {
	tb.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "parley.db"))
	if err != nil {
		tb.Fatalf("open: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("close: %v", err)
		}
	})
	return s
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) parley.Store { return MustOpen(t) })
}
