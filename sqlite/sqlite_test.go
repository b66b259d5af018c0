package sqlite_test

import (
	"context"
	"os"
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

// TestStoreSole runs the same on a Store that is the only writer of its file, which keeps
// seats and each seat's latest messages in memory (seatcache.go, dedup.go).
func TestStoreSole(t *testing.T) {
	storetest.Run(t, func(t *testing.T) parley.Store { return mustOpenSole(t) })
}

// TestShared runs two Stores on one file, as two processes would: SQLite's write lock keeps
// their seqs gapless. Watch is in-process only, so it is not checked across them.
func TestShared(t *testing.T) {
	storetest.RunShared(t, func(t *testing.T) (parley.Store, parley.Store) {
		path := filepath.Join(t.TempDir(), "parley.db")
		return mustOpenPath(t, path), mustOpenPath(t, path)
	}, false)
}

func mustOpenPath(tb testing.TB, path string) *sqlite.Store {
	tb.Helper()
	s, err := sqlite.Open(context.Background(), path)
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

// TestReopen checks that data survives closing and that migrations run once.
func TestReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	storetest.MustCreateRoom(t, s, "limiter")
	storetest.MustAppend(t, s, &parley.Append{Message: &parley.Message{Room: "limiter", Seat: "alice", Format: parley.FormatText, Body: "kept\r\n"}})
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}

	s = mustOpenPath(t, path)
	m, err := s.Message(t.Context(), "limiter", 1)
	if err != nil || m.Body != "kept\r\n" {
		t.Fatalf("after reopen: %+v, %v", m, err)
	}
	if got := storetest.MustAppend(t, s, &parley.Append{Message: &parley.Message{Room: "limiter", Seat: "alice", Format: parley.FormatText, Body: "next"}}); got.Seq != 2 {
		t.Fatalf("seq after reopen = %d, want 2", got.Seq)
	}
}

func TestOpenBadPath(t *testing.T) {
	if _, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "no", "such", "dir", "parley.db")); err == nil {
		t.Fatal("Open in a missing directory succeeded")
	}
	if _, err := sqlite.Open(t.Context(), "parley.db?mode=ro"); err == nil {
		t.Fatal("Open accepted a path with '?'")
	}
}

func BenchmarkAppend(b *testing.B)   { storetest.BenchAppend(b, MustOpen(b)) }
func BenchmarkMessages(b *testing.B) { storetest.BenchMessages(b, MustOpen(b)) }

func TestFileMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	s := mustOpenPath(t, path)
	storetest.MustCreateRoom(t, s, "limiter")
	for _, p := range []string{path, path + "-wal", path + "-search", path + "-search-wal"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("stat: %v", err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", filepath.Base(p), fi.Mode().Perm())
		}
	}
}

func BenchmarkAppendParallel(b *testing.B) { storetest.BenchAppendParallel(b, MustOpen(b)) }

// The same on a Sole store, as `parley serve` opens it: dedup and seqs from memory.
func BenchmarkAppendSole(b *testing.B)         { storetest.BenchAppend(b, mustOpenSole(b)) }
func BenchmarkAppendParallelSole(b *testing.B) { storetest.BenchAppendParallel(b, mustOpenSole(b)) }

func mustOpenSole(tb testing.TB) *sqlite.Store {
	tb.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "parley.db"), sqlite.Sole())
	if err != nil {
		tb.Fatalf("open: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}
