package sqlite

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parleyhq/parley/internal/tmpfs"
	"github.com/parleyhq/parley/storetest"
)

// TestWarmWAL: with WarmWAL, Open leaves a -wal file of warmPages(ckptLimit) frames, and the
// commits that follow, fewer pages than that, write over it: the file does not grow. Nothing
// of the rolled-back growth is visible, the appends read back whole after reopening, and the
// WAL of a store opened without the option starts empty.
func TestWarmWAL(t *testing.T) {
	const limit = 600
	dir := t.TempDir()
	walOf := func(path string) int64 {
		t.Helper()
		st, err := os.Stat(path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	small := func(s *Store) { s.ckptLimit = limit }

	cold := filepath.Join(dir, "cold.db")
	s, err := Open(t.Context(), cold, Sole(), noIdleIndex(), small)
	if err != nil {
		t.Fatal(err)
	}
	want := walFileSize(warmPages(limit), 4096)
	if n := walOf(cold); n > want/4 {
		t.Fatalf("without WarmWAL the WAL holds %d bytes after Open (the migrations' pages), want under %d", n, want/4)
	}
	s.Close()

	path := filepath.Join(dir, "warm.db")
	s, err = Open(t.Context(), path, Sole(), noIdleIndex(), small, WarmWAL())
	if err != nil {
		t.Fatal(err)
	}
	grown := walOf(path)
	if grown < want {
		t.Fatalf("after Open with WarmWAL the WAL holds %d bytes, want at least %d (%d frames)", grown, want, warmPages(limit))
	}
	var tables int
	if err := s.write.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = 'parley_warm_wal'`).Scan(&tables); err != nil || tables != 0 {
		t.Fatalf("the growth's table is in the schema (%d, %v); it must have been rolled back", tables, err)
	}
	storetest.MustCreateRoom(t, s, "r")
	const posts = 150 // one commit each, ~3 pages: well under the limit
	for j := range posts {
		postCk(t, s, "a", j)
	}
	if n := walOf(path); n != grown {
		t.Fatalf("after %d commits the WAL holds %d bytes, %d after Open: the commits appended instead of writing over it", posts, n, grown)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(t.Context(), path, WarmWAL())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	msgs, err := s.Messages(t.Context(), "r", 0, 0)
	if err != nil || len(msgs) != posts {
		t.Fatalf("after reopening: %d messages, %v; want %d", len(msgs), err, posts)
	}
	for i, m := range msgs {
		if m.Seq != int64(i+1) {
			t.Fatalf("message %d has seq %d", i, m.Seq)
		}
	}
}

// TestWarmWALSpace: Open does not grow the WAL on a file system with less than warmFree times
// the growth free, and says why in its log.
func TestWarmWALSpace(t *testing.T) {
	const limit = 600
	want := walFileSize(warmPages(limit), 4096)
	defer func(f func(string) (uint64, bool)) { fsFree = f }(fsFree)
	fsFree = func(string) (uint64, bool) { return uint64(want) * (warmFree - 1), true }
	var log bytes.Buffer
	path := filepath.Join(t.TempDir(), "tight.db")
	s, err := Open(t.Context(), path, Sole(), noIdleIndex(), func(s *Store) { s.ckptLimit = limit }, WarmWAL(),
		WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > want/4 {
		t.Fatalf("with %d bytes free the WAL grew to %d bytes; want it left to the commits", uint64(want)*(warmFree-1), st.Size())
	}
	if !strings.Contains(log.String(), "the WAL is not warmed") || !strings.Contains(log.String(), "MB free") {
		t.Fatalf("the log does not say why the WAL was not warmed:\n%s", log.String())
	}
}

// TestWarmWALFull: on a file system that fills while the WAL grows (a 16 MiB tmpfs that claims
// more free space than it has), Open still succeeds, gives the space back (the WAL is cut to
// nothing), and posts go on.
func TestWarmWALFull(t *testing.T) {
	mnt := tmpfs.Mount(t, "16m")
	defer func(f func(string) (uint64, bool)) { fsFree = f }(fsFree)
	fsFree = func(string) (uint64, bool) { return 1 << 40, true }
	var log bytes.Buffer
	path := filepath.Join(mnt, "parley.db")
	s, err := Open(t.Context(), path, Sole(), noIdleIndex(), WarmWAL(), WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.Contains(log.String(), "could not warm the WAL") {
		t.Fatalf("a 16 MiB disk took the 40 MB WAL without a word:\n%s", log.String())
	}
	if free, ok := freeBytes(mnt); !ok || free < 12<<20 {
		t.Fatalf("after the failed growth %d bytes of the 16 MiB are free; the growth was not given back\n%s", free, log.String())
	}
	storetest.MustCreateRoom(t, s, "r")
	for j := range 20 {
		postCk(t, s, "a", j)
	}
	msgs, err := s.Messages(t.Context(), "r", 0, 0)
	if err != nil || len(msgs) != 20 {
		t.Fatalf("%d messages, %v; want 20", len(msgs), err)
	}
}
