package sqlite

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/lockedbuf"
	"github.com/parleyhq/parley/storetest"
)

// TestSearchRightAfterPost: posts from many seats at once, each searched for as soon as it is
// acknowledged, with the indexer never indexing on its own (no chunk reached, no idle): every
// search finds its post, so what the indexer has not done yet is never visible. Once as a
// Sole store, which knows the rooms behind, and once not, which always catches the room up.
func TestSearchRightAfterPost(t *testing.T) {
	for _, sole := range []bool{true, false} {
		t.Run(fmt.Sprintf("sole=%v", sole), func(t *testing.T) {
			opts := []Option{noIdleIndex(), searchChunkOf(1 << 30)} // only searches index
			if sole {
				opts = append(opts, Sole())
			}
			path := filepath.Join(t.TempDir(), "parley.db")
			s, err := Open(t.Context(), path, opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			storetest.MustCreateRoom(t, s, "r")
			var wg sync.WaitGroup
			for seat := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 12 {
						word := fmt.Sprintf("w%dx%d", seat, i)
						body := "posted " + word + " now"
						m, err := s.Append(t.Context(), &parley.Append{Message: &parley.Message{Room: "r", Seat: fmt.Sprint("s", seat),
							Time: time.Now(), Format: parley.FormatText, Body: body, Hash: []byte(body)}})
						if err != nil {
							t.Error(err)
							return
						}
						found, err := s.Search(t.Context(), "r", []string{word}, 5)
						if err != nil || len(found) != 1 || found[0].Seq != m.Seq || found[0].Body != body {
							t.Errorf("search for %s right after #%d: %v, %v", word, m.Seq, found, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			all, err := s.Search(t.Context(), "r", []string{"posted"}, 200)
			if err != nil || fmt.Sprint(messageSeqs(all)) != fmt.Sprint(seqsDown(96)) {
				t.Fatalf("search for every post: %v, %v; want 96 to 1", messageSeqs(all), err)
			}
		})
	}
}

func messageSeqs(msgs []*parley.Message) []int64 {
	var out []int64
	for _, m := range msgs {
		out = append(out, m.Seq)
	}
	return out
}

// searchChunkOf sets the chunk the indexer waits for.
func searchChunkOf(n int) Option { return func(s *Store) { s.searchChunk = n } }

// seqsDown is n, n-1, …, 1: the order of a search whose matches all score the same.
func seqsDown(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(n - i)
	}
	return out
}

// TestSearchFileUpgrade: a database at migration 0005, its search index inside it with each
// room's progress, loses both (migration 0006), gets an id, and its messages are indexed in
// the search file, each once.
func TestSearchFileUpgrade(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	db := openAtMigration(t, path, "migrations/0001_init.sql", "migrations/0002_topic_index.sql", "migrations/0003_search.sql",
		"migrations/0004_search_by_batch.sql", "migrations/0005_search_progress.sql")
	// As that parley's committer left them: r indexed up to #2 of 3, q wholly, empty nothing.
	for _, q := range []string{
		`INSERT INTO rooms (name, policy, created_at, last_seq) VALUES ('r', '{}', 0, 3), ('q', '{}', 0, 1), ('empty', '{}', 0, 0)`,
		`INSERT INTO messages (room, seq, seat, time, format, body) VALUES ('r', 1, 'a', 0, 'text', CAST('redis before' AS BLOB))`,
		`INSERT INTO messages (room, seq, seat, time, format, body) VALUES ('r', 2, 'b', 0, 'text', CAST('cache before' AS BLOB))`,
		`INSERT INTO messages (room, seq, seat, time, format, body) VALUES ('r', 3, 'b', 0, 'text', CAST('redis waiting' AS BLOB))`,
		`INSERT INTO messages (room, seq, seat, time, format, body) VALUES ('q', 1, 'b', 0, 'text', CAST('queue before' AS BLOB))`,
		`INSERT INTO message_words (room, seq, body) SELECT room, seq, CAST(body AS TEXT) FROM messages WHERE seq <= 2`,
		`INSERT OR REPLACE INTO search_progress (room, seq) VALUES ('r', 2), ('q', 1)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	defer func(n int64) { searchBuildLog = n }(searchBuildLog)
	searchBuildLog = 4 // the messages the index lacks: say so, as for a big database
	var log lockedbuf.Buffer
	s, err := Open(t.Context(), path, Sole(), noIdleIndex(), WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	var left string
	if err := s.read.QueryRow(`SELECT coalesce(group_concat(name, ' '), '') FROM sqlite_schema WHERE name LIKE 'message_words%' OR name LIKE 'search%'`).Scan(&left); err != nil || left != "" {
		t.Fatalf("the database still holds %q, %v; want the index gone from it", left, err)
	}
	var id string
	if err := s.read.QueryRow(`SELECT id FROM database_id`).Scan(&id); err != nil || len(id) != 32 {
		t.Fatalf("database_id %q, %v; want 32 hex digits", id, err)
	}
	wantFound(t, s, "r", "redis", 3, 1)
	storetest.MustAppend(t, s, &parley.Append{Message: &parley.Message{Room: "r", Seat: "a", Time: time.Now(), Format: parley.FormatText, Body: "redis after", Hash: []byte("4")}})
	wantFound(t, s, "r", "redis", 4, 3, 1)
	wantFound(t, s, "q", "queue", 1)
	waitIndexed(t, path, "q", 1) // Open had the indexer build every room, searched or not
	indexBehind(t, s)
	wantIndexExact(t, path)
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(log.String(), "search index: built"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the log: %q; want the index said built", log.String())
		}
	}
	if l := log.String(); !strings.Contains(l, "indexing the messages it lacks") || !strings.Contains(l, "messages=4 rooms=2") {
		t.Errorf("the log: %q; want the build announced, with 4 messages of 2 rooms", l)
	}
}

// TestSearchFileRebuilt: a search file that is missing, is not a database, was made from another
// database, holds messages the database does not (a backup restored over the database), or lost
// its last transactions (a power cut under synchronous=NORMAL) is made good at Open, and then
// every search is exact. Each case is checked to be what it claims first, and the rebuilds say
// so in the log.
func TestSearchFileRebuilt(t *testing.T) {
	// fill makes a database at path with rooms r (5 messages) and q (2), all indexed.
	fill := func(t *testing.T, path string, words ...string) {
		s, err := Open(t.Context(), path, Sole())
		if err != nil {
			t.Fatal(err)
		}
		for _, room := range []string{"r", "q"} {
			storetest.MustCreateRoom(t, s, room)
		}
		appendN(t, s, "r", 1, 5)
		appendN(t, s, "q", 1, 2)
		for _, w := range words {
			storetest.MustAppend(t, s, &parley.Append{Message: &parley.Message{Room: "r", Seat: "bob", Time: time.Now(),
				Format: parley.FormatText, Body: w, Hash: []byte(w)}})
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		wantIndexExact(t, path)
	}
	copyFile := func(t *testing.T, from, to string) {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name    string
		rebuilt string // what the log says, "" if the file is kept
		damage  func(t *testing.T, path string)
	}{
		{"missing", "", func(t *testing.T, path string) {
			if err := os.Remove(path + searchSuffix); err != nil {
				t.Fatal(err)
			}
		}},
		{"not a database", "file is not a database", func(t *testing.T, path string) {
			if err := os.WriteFile(path+searchSuffix, bytes.Repeat([]byte("not sqlite "), 1000), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"another database", "made from another database", func(t *testing.T, path string) {
			// Another database's search file, with the same rooms and other words.
			other := filepath.Join(t.TempDir(), "other.db")
			fill(t, other, "stranger")
			copyFile(t, other+searchSuffix, path+searchSuffix)
			if got := indexedSeqs(t, path, "r"); len(got) != 6 {
				t.Fatalf("the other index holds %v, want 6 messages", got)
			}
		}},
		{"backup restored", "a backup restored", func(t *testing.T, path string) {
			// A backup taken at 6 messages in r, restored over the database once r had 7.
			backup := filepath.Join(t.TempDir(), "backup.db")
			if _, err := Backup(t.Context(), path, backup); err != nil {
				t.Fatal(err)
			}
			s, err := Open(t.Context(), path, Sole())
			if err != nil {
				t.Fatal(err)
			}
			storetest.MustAppend(t, s, &parley.Append{Message: &parley.Message{Room: "r", Seat: "bob", Time: time.Now(),
				Format: parley.FormatText, Body: "lost", Hash: []byte("lost")}})
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if got := indexedSeqs(t, path, "r"); len(got) != 7 {
				t.Fatalf("before the restore the index holds %v, want 7 messages", got)
			}
			for _, suffix := range []string{"-wal", "-shm"} {
				os.Remove(path + suffix)
			}
			copyFile(t, backup, path)
		}},
		{"lost its last transactions", "", func(t *testing.T, path string) {
			// The files as a power cut may leave them under synchronous=NORMAL: the search
			// file without its WAL, so without its last transactions, index and progress.
			s, err := Open(t.Context(), path, Sole(), noIdleIndex(), searchChunkOf(1<<30))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range []string{"later one", "later two"} {
				storetest.MustAppend(t, s, &parley.Append{Message: &parley.Message{Room: "r", Seat: "bob", Time: time.Now(),
					Format: parley.FormatText, Body: w, Hash: []byte(w)}})
			}
			wantFound(t, s, "r", "later", 8, 7) // indexed, in the search file's WAL
			crashed := t.TempDir()
			for _, suffix := range []string{"", "-wal", searchSuffix} {
				copyFile(t, path+suffix, filepath.Join(crashed, "db"+suffix))
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			for _, suffix := range []string{"-wal", "-shm", searchSuffix + "-wal", searchSuffix + "-shm"} {
				os.Remove(path + suffix)
			}
			for _, suffix := range []string{"", "-wal", searchSuffix} {
				copyFile(t, filepath.Join(crashed, "db"+suffix), path+suffix)
			}
			if got := indexedSeqs(t, path, "r"); len(got) != 6 {
				t.Fatalf("the search file without its WAL holds %v, want the 6 messages of before", got)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "parley.db")
			fill(t, path, "native")
			c.damage(t, path)
			var log lockedbuf.Buffer
			s, err := Open(t.Context(), path, Sole(), noIdleIndex(), WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			defer s.Close()
			said := strings.Contains(log.String(), "building it again")
			if c.rebuilt != "" && (!said || !strings.Contains(log.String(), c.rebuilt)) || c.rebuilt == "" && said {
				t.Errorf("the log says %q; want a rebuild: %q", log.String(), c.rebuilt)
			}
			wantFound(t, s, "r", "native", 6)
			wantFound(t, s, "r", "stranger")
			wantFound(t, s, "r", "lost")
			if c.name == "lost its last transactions" {
				wantFound(t, s, "r", "later", 8, 7)
			}
			wantFound(t, s, "r", "common", 5, 4, 3, 2, 1)
			wantFound(t, s, "q", "common", 2, 1)
			if fi, err := os.Stat(path + searchSuffix); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("the search file: %v, %v; want it readable by its owner only", fi, err)
			}
			indexBehind(t, s)
			wantIndexExact(t, path)
		})
	}
}

// TestSearchNoLockOnDatabase: the indexer reads the messages from its own connection, which
// attaches the database: its transactions must never take the database's write lock, or the
// committer would wait for them. A transaction of the indexer held open does not keep a post
// from committing.
func TestSearchNoLockOnDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	s, err := Open(t.Context(), path, Sole(), noIdleIndex())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.MustCreateRoom(t, s, "r")
	appendN(t, s, "r", 1, 3)
	// Hold an index transaction open, as far as the indexer goes: the search file's write
	// lock taken, the messages read.
	s.search.mu.Lock()
	conn, err := s.search.conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tx, err := conn.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var from, to, n int64
	if _, err := tx.Exec(qProgressLock, "r"); err != nil {
		t.Fatal(err)
	}
	if err := tx.QueryRow(qIndexUpTo, "r", from, 100).Scan(&to, &n); err != nil || n != 3 {
		t.Fatalf("the index transaction read %d messages, %v", n, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	_, err = s.Append(ctx, &parley.Append{Message: &parley.Message{Room: "r", Seat: "a", Time: time.Now(), Format: parley.FormatText, Body: "while", Hash: []byte("while")}})
	tx.Rollback()
	conn.Close()
	s.search.mu.Unlock()
	if err != nil {
		t.Fatalf("a post while the indexer holds a transaction: %v", err)
	}
	wantFound(t, s, "r", "while", 4)
}

// BenchmarkSearchFileIndex measures the indexer's CPU time per message (its thread's, so the
// same under load as when idle, roughly) when it indexes a room in transactions of the given
// number of messages: FTS5 writes a segment per transaction and merges them as they pile up,
// so small transactions cost more in all. It decides searchChunk.
//
//	go test ./sqlite -run '^$' -bench SearchFileIndex -benchtime 20000x
func BenchmarkSearchFileIndex(b *testing.B) {
	for _, chunk := range []int{16, 64, 128, 512, 2048} {
		b.Run(fmt.Sprintf("chunk=%d", chunk), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "parley.db")
			s, err := Open(context.Background(), path, noIdleIndex(), searchChunkOf(1<<30))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			storetest.MustCreateRoom(b, s, "r")
			// b.N messages of about 250 bytes of words (as BenchmarkCommitBatch posts), written
			// straight into the table.
			words := strings.Fields("limiter tokens bucket refill burst window seat room ask answer review commit evidence test " +
				"latency throughput durable group fsync index search topic decision state summary plan risk")
			tx, err := s.write.Begin()
			if err != nil {
				b.Fatal(err)
			}
			for i := 1; i <= b.N; i++ {
				var sb strings.Builder
				fmt.Fprintf(&sb, "v1 note m%d to all n=0\n", i)
				for k := 0; sb.Len() < 250; k++ {
					sb.WriteString(words[(i*7+k*13)%len(words)])
					sb.WriteByte(' ')
				}
				if _, err := tx.Exec(`INSERT INTO messages (room, seq, seat, time, format, body) VALUES ('r', ?, 'alice', 0, 'text', ?)`,
					i, []byte(sb.String())); err != nil {
					b.Fatal(err)
				}
			}
			if err := tx.Commit(); err != nil {
				b.Fatal(err)
			}
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.ResetTimer()
			t0 := threadCPU()
			for done := 0; done < b.N; {
				n, err := s.search.indexRoom(context.Background(), "r", chunk)
				if err != nil || n == 0 {
					b.Fatalf("indexed %d: %d, %v", done, n, err)
				}
				done += n
			}
			b.ReportMetric(float64((threadCPU()-t0).Microseconds())/float64(b.N), "cpu-µs/msg")
		})
	}
}

// TestSearchFileDamagedInside: a search file whose header and small tables read well but whose
// index pages are garbage passes Open's checks; the first search that meets the damage has the
// file built again, says so in the log, and answers from the new index, exactly.
func TestSearchFileDamagedInside(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	s, err := Open(t.Context(), path, Sole())
	if err != nil {
		t.Fatal(err)
	}
	storetest.MustCreateRoom(t, s, "r")
	storetest.MustCreateRoom(t, s, "q")
	appendN(t, s, "r", 1, 300)
	appendN(t, s, "q", 1, 3)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path + searchSuffix)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 8*4096 {
		t.Fatalf("the search file is %d bytes: too small for the test", len(b))
	}
	for i := len(b) - len(b)/4; i < len(b); i++ {
		b[i] = 0xa5
	}
	if err := os.WriteFile(path+searchSuffix, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var log lockedbuf.Buffer
	s, err = Open(t.Context(), path, Sole(), noIdleIndex(), WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if strings.Contains(log.String(), "building it again") {
		t.Fatalf("Open found the damage (%q): the test does not test what it means to", log.String())
	}
	found, err := s.Search(t.Context(), "r", []string{"lag299", "lag7"}, 5)
	if err != nil || fmt.Sprint(messageSeqs(found)) != "[299 7]" {
		t.Fatalf("search of a damaged index: %v, %v; want #299 and #7", messageSeqs(found), err)
	}
	if l := log.String(); !strings.Contains(l, "building it again") || !strings.Contains(l, "the file is damaged") {
		t.Errorf("the log: %q; want the rebuild and its reason", l)
	}
	wantFound(t, s, "q", "common", 3, 2, 1)
	indexBehind(t, s)
	wantIndexExact(t, path)
}
