package sqlite

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/storetest"
)

// The search index is written in chunks (batch.go); these tests pin down that a search, a
// restart after a crash, and an upgrade never see it short of a committed message.

// noIdleIndex keeps the committer from indexing when idle, so that what the batches leave
// unindexed stays so until a chunk, a search, Close or Open.
func noIdleIndex() Option { return func(s *Store) { s.searchIdle = time.Hour } }

// indexedSeqs is the seqs of the room in the search index of the database at path.
func indexedSeqs(t *testing.T, path, room string) []int64 {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=query_only(1)")
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
	for _, suffix := range []string{"", "-wal"} {
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
	if got := indexedSeqs(t, crashed, "r"); fmt.Sprint(got) != "[1 2 3 4 5 6 7 8]" {
		t.Fatalf("after Open the index holds %v, want 1 to 8", got)
	}
	wantFound(t, c, "r", "lag7", 7)
	wantIndexExact(t, c.read)

	// Close indexes what waits: the first store's file holds it all once closed.
	appendN(t, s, "r", 9, 2)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := indexedSeqs(t, path, "r"); len(got) != 10 {
		t.Fatalf("after Close the index holds %v, want 1 to 10", got)
	}
}

// TestSearchLagChunk: a batch indexes what waits once it makes a chunk, and an idle committer
// indexes it on its own, neither waiting for a search.
func TestSearchLagChunk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	s, err := Open(t.Context(), path, Sole(), noIdleIndex())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.MustCreateRoom(t, s, "r")
	appendN(t, s, "r", 1, searchChunk-1)
	if got := indexedSeqs(t, path, "r"); len(got) != 0 {
		t.Fatalf("%d messages, fewer than a chunk: %d indexed, want none yet", searchChunk-1, len(got))
	}
	appendN(t, s, "r", searchChunk, 1)
	if got := indexedSeqs(t, path, "r"); len(got) != searchChunk {
		t.Fatalf("a chunk of %d messages: %d indexed", searchChunk, len(got))
	}

	i, err := Open(t.Context(), filepath.Join(t.TempDir(), "idle.db"), Sole(), func(s *Store) { s.searchIdle = time.Millisecond })
	if err != nil {
		t.Fatal(err)
	}
	defer i.Close()
	storetest.MustCreateRoom(t, i, "r")
	appendN(t, i, "r", 1, 2)
	deadline := time.Now().Add(10 * time.Second)
	for len(indexedSeqs(t, i.path, "r")) != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("an idle committer left %v indexed of 2", indexedSeqs(t, i.path, "r"))
		}
		time.Sleep(5 * time.Millisecond)
	}
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
	wantIndexExact(t, b.read)
	appendN(t, a, "r", 5, 1)
	wantFound(t, a, "r", "lag5", 5)
	wantIndexExact(t, a.read)
}

// TestSearchProgressUpgrade: a database at the schema before search_progress (migration 0004,
// its index holding every message) gets each room's progress at its last message, and indexes
// nothing twice.
func TestSearchProgressUpgrade(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	db := openAtMigration(t, path, "migrations/0001_init.sql", "migrations/0002_topic_index.sql", "migrations/0003_search.sql", "migrations/0004_search_by_batch.sql")
	// As the committer of that schema left them: each message indexed in its transaction.
	for _, q := range []string{
		`INSERT INTO rooms (name, policy, created_at, last_seq) VALUES ('r', '{}', 0, 2), ('q', '{}', 0, 1), ('empty', '{}', 0, 0)`,
		`INSERT INTO messages (room, seq, seat, time, format, body) VALUES ('r', 1, 'a', 0, 'text', CAST('redis before' AS BLOB))`,
		`INSERT INTO messages (room, seq, seat, time, format, body) VALUES ('r', 2, 'b', 0, 'text', CAST('cache before' AS BLOB))`,
		`INSERT INTO messages (room, seq, seat, time, format, body) VALUES ('q', 1, 'b', 0, 'text', CAST('queue before' AS BLOB))`,
		`INSERT INTO message_words (room, seq, body) SELECT room, seq, CAST(body AS TEXT) FROM messages`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	s, err := Open(t.Context(), path, Sole(), noIdleIndex())
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	var progress string
	if err := s.read.QueryRow(`SELECT group_concat(room || '=' || seq, ' ') FROM (SELECT * FROM search_progress ORDER BY room)`).Scan(&progress); err != nil {
		t.Fatal(err)
	}
	if progress != "q=1 r=2" {
		t.Fatalf("search_progress after the upgrade: %q, want q=1 r=2", progress)
	}
	wantIndexExact(t, s.read) // nothing indexed twice by Open
	storetest.MustAppend(t, s, &parley.Append{Message: &parley.Message{Room: "r", Seat: "a", Time: time.Now(), Format: parley.FormatText, Body: "redis after", Hash: []byte("3")}})
	wantFound(t, s, "r", "redis", 3, 1)
	wantFound(t, s, "q", "queue", 1)
	wantIndexExact(t, s.read)
}
