package postgres_test

import (
	"context"
	"testing"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/pgtest"
	"github.com/parleyhq/parley/postgres"
	"github.com/parleyhq/parley/storetest"
)

// crashEnv, when set in the environment of this test binary, makes TestCrashChild append to
// the database it names and print each acknowledged seq until it is killed.
const crashEnv = "PARLEY_POSTGRES_CRASH_DSN"

func TestCrashChild(t *testing.T) {
	storetest.CrashChild(t, crashEnv, func(dsn string) (parley.Store, error) {
		return postgres.Open(context.Background(), dsn)
	})
}

// TestCrash kills a server process's store in the middle of appending: PostgreSQL rolls its
// open transaction back, with the seq it took, so every acknowledged append is there, the room
// is not left locked, and the next append continues without a gap.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	dsn := pgtest.DSN(t)
	storetest.Crash(t, MustOpen(t, dsn), crashEnv, dsn, "TestCrashChild")
}
