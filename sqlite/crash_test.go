package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/sqlite"
	"github.com/parleyhq/parley/storetest"
)

// crashEnv, when set in the environment of this test binary, makes TestCrashChild append to
// the database it names and print each acknowledged seq until it is killed.
const crashEnv = "PARLEY_SQLITE_CRASH_DB"

func TestCrashChild(t *testing.T) {
	storetest.CrashChild(t, crashEnv, func(path string) (parley.Store, error) {
		return sqlite.Open(context.Background(), path)
	})
}

// TestCrash kills a process in the middle of appending and checks that, after recovery, every
// append it acknowledged is there, whole, and that seqs continue without a gap.
func TestCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	storetest.Crash(t, mustOpenPath(t, path), crashEnv, path, "TestCrashChild")
	// The search index is written by the committer in each batch's transaction: after the
	// kills it holds exactly the messages that survived.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sqlite.WantIndexExact(t, db)
}
