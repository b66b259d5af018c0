package sqlite

import (
	"os"
	"path/filepath"
	"testing"

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
