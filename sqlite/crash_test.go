package sqlite_test

import (
	"context"
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

// crashSoleEnv is crashEnv for a child whose store is Sole and has a warm WAL, as `parley
// serve` opens it: its committer keeps seqs and dedup in memory (the parent writes only
// between children), and its commits write over the frames of the WAL's rolled-back growth.
const crashSoleEnv = "PARLEY_SQLITE_CRASH_SOLE_DB"

func TestCrashSoleChild(t *testing.T) {
	storetest.CrashChild(t, crashSoleEnv, func(path string) (parley.Store, error) {
		sqlite.SetSeatIndexTail(5) // in the child only: so that kills land on the writes of seat_index too
		return sqlite.Open(context.Background(), path, sqlite.Sole(), sqlite.WarmWAL())
	})
}

// TestCrashSole is TestCrash with a Sole child; its seat_index must agree with the messages
// after every kill, the child writing it every five messages.
func TestCrashSole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	storetest.Crash(t, mustOpenPath(t, path), crashSoleEnv, path, "TestCrashSoleChild")
	reopen(t, path)
	sqlite.WantIndexExact(t, path)
	sqlite.WantSeatIndexExact(t, path)
}

// TestCrash kills a process in the middle of appending and checks that, after recovery, every
// append it acknowledged is there, whole, and that seqs continue without a gap.
func TestCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	s := mustOpenPath(t, path)
	storetest.Crash(t, s, crashEnv, path, "TestCrashChild")
	// The killed children left messages unindexed, and the parent's own last ones may wait
	// for a chunk: a search finds them all the same.
	msgs, err := s.Messages(t.Context(), "crash", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	found, err := s.Search(t.Context(), "crash", []string{"post", "after"}, len(msgs)+1)
	if err != nil || len(found) != len(msgs) {
		t.Fatalf("search after the crashes: %d of %d messages, %v", len(found), len(msgs), err)
	}
	// Once the store is stopped and opened again, the search index holds exactly the
	// messages that survived.
	reopen(t, path)
	sqlite.WantIndexExact(t, path)
	sqlite.WantSeatIndexExact(t, path)
}

// reopen opens the database at path and closes it: the store indexes what waits.
func reopen(t *testing.T, path string) {
	t.Helper()
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
