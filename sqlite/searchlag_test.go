package sqlite

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/storetest"
)

// The search index is written beside the committer, in chunks, in a file of its own
// (searchfile.go); these tests pin down that a search, a restart after a crash, a lost or
// damaged search file and an upgrade never see it short of a committed message.

// noIdleIndex keeps the committer from indexing when idle, so that what the batches leave
// unindexed stays so until a chunk, a search, Close or Open.
func noIdleIndex() Option { return func(s *Store) { s.searchIdle = time.Hour } }

// indexedSeqs is the seqs of the room in the search index of the database at path (in its
// search file).
func indexedSeqs(t *testing.T, path, room string) []int64 {
	t.Helper()
	db, err := sql.Open("sqlite", path+searchSuffix+"?_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT seq FROM message_words WHERE room = ? ORDER BY seq`, room)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var seqs []int64
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, seq)
	}
	return seqs
}

func appendN(t *testing.T, s *Store, room string, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		body := fmt.Sprintf("v1 note m%d to all n=0\nlag%d common\n", i, i)
		storetest.MustAppend(t, s, &parley.Append{Message: &parley.Message{Room: room, Seat: "alice", Time: time.Now(),
			Format: parley.FormatConvention, Body: body, Hash: []byte(body)}})
	}
}

// TestSearchLagCrash: messages committed but not yet indexed when the process dies (here the
// database and its WAL copied while the store runs, which is what a crash leaves on disk) are
// indexed by the next Open, each once.
func TestSearchLagCrash(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "parley.db")
	s, err := Open(t.Context(), path, Sole(), noIdleIndex())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.MustCreateRoom(t, s, "r")
	appendN(t, s, "r", 1, 3)
	wantFound(t, s, "r", "lag2", 2) // indexes 1-3
	appendN(t, s, "r", 4, 5)        // committed, not indexed (fewer than a chunk)

	crashed := filepath.Join(dir, "crashed.db")
	for _, suffix := range []string{"", "-wal", searchSuffix, searchSuffix + "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(crashed+suffix, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The copy is what the test means it to be: the last five messages out of the index.
	if got := indexedSeqs(t, crashed, "r"); fmt.Sprint(got) != "[1 2 3]" {
		t.Fatalf("the crashed copy's index holds %v, want [1 2 3]", got)
	}
	c, err := Open(t.Context(), crashed, Sole(), noIdleIndex())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	wantFound(t, c, "r", "lag7", 7)
	waitIndexed(t, crashed, "r", 8) // Open had the indexer start on them, without waiting for a chunk
	wantIndexExact(t, crashed)

	// Close indexes what waits: the first store's file holds it all once closed.
	appendN(t, s, "r", 9, 2)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := indexedSeqs(t, path, "r"); len(got) != 10 {
		t.Fatalf("after Close the index holds %v, want 1 to 10", got)
	}
}

// waitIndexed waits for the indexer to have indexed the room's messages 1 to n, and no other.
func waitIndexed(t *testing.T, path, room string, n int) {
	t.Helper()
	want := make([]int64, n)
	for i := range want {
		want[i] = int64(i + 1)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := indexedSeqs(t, path, room)
		if slices.Equal(got, want) {
			return
		}
		if len(got) > n || time.Now().After(deadline) {
			t.Fatalf("the indexer left %v indexed, want 1 to %d", got, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSearchLagChunk: a batch indexes what waits once it makes a chunk, and an idle committer
// indexes it on its own, neither waiting for a search.
func TestSearchLagChunk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	const chunk = 16
	s, err := Open(t.Context(), path, Sole(), noIdleIndex(), searchChunkOf(chunk))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.MustCreateRoom(t, s, "r")
	appendN(t, s, "r", 1, chunk-1)
	if got := indexedSeqs(t, path, "r"); len(got) != 0 {
		t.Fatalf("%d messages, fewer than a chunk: %d indexed, want none yet", chunk-1, len(got))
	}
	time.Sleep(50 * time.Millisecond) // the indexer had its chance
	if got := indexedSeqs(t, path, "r"); len(got) != 0 {
		t.Fatalf("%d messages, fewer than a chunk: %d indexed, want none yet", chunk-1, len(got))
	}
	appendN(t, s, "r", chunk, 1)
	waitIndexed(t, path, "r", chunk)

	i, err := Open(t.Context(), filepath.Join(t.TempDir(), "idle.db"), Sole(), func(s *Store) { s.searchIdle = time.Millisecond })
	if err != nil {
		t.Fatal(err)
	}
	defer i.Close()
	storetest.MustCreateRoom(t, i, "r")
	appendN(t, i, "r", 1, 2)
	waitIndexed(t, i.path, "r", 2)
}

// TestSearchLagOtherStore: a store that shares the file (not Sole) finds what another store
// committed and left unindexed, by the progress on file rather than its own memory.
func TestSearchLagOtherStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	a, err := Open(t.Context(), path, noIdleIndex())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(t.Context(), path, noIdleIndex())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	storetest.MustCreateRoom(t, a, "r")
	appendN(t, a, "r", 1, 4)
	if got := indexedSeqs(t, path, "r"); len(got) != 0 {
		t.Fatalf("index before the search: %v, want empty (else the test proves nothing)", got)
	}
	wantFound(t, b, "r", "lag3", 3)
	wantFound(t, b, "r", "common", 4, 3, 2, 1)
	wantIndexExact(t, path)
	appendN(t, a, "r", 5, 1)
	wantFound(t, a, "r", "lag5", 5)
	wantIndexExact(t, path)
}
