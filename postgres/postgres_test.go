package postgres_test

import (
	"context"
	"testing"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/pgtest"
	"github.com/parleyhq/parley/postgres"
	"github.com/parleyhq/parley/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// MustOpen opens a store on dsn and closes it with tb.Cleanup.
func MustOpen(tb testing.TB, dsn string) *postgres.Store {
	tb.Helper()
	s, err := postgres.Open(context.Background(), dsn)
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
	storetest.Run(t, func(t *testing.T) parley.Store { return MustOpen(t, pgtest.DSN(t)) })
}

// TestShared runs two Stores on one database, as two server processes.
func TestShared(t *testing.T) {
	storetest.RunShared(t, func(t *testing.T) (parley.Store, parley.Store) {
		dsn := pgtest.DSN(t)
		return MustOpen(t, dsn), MustOpen(t, dsn)
	}, true)
}
