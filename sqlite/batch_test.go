package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/sqlstore"
	"github.com/parleyhq/parley/storetest"
)

// wantIndexExact fails t unless the search index of the database at path holds every message
// of the database once and nothing else, compared as (room, seq) lists read from both files.
func wantIndexExact(t *testing.T, path string) {
	t.Helper()
	list := func(file, q string) []string {
		db, err := sql.Open("sqlite", file+"?_pragma=query_only(1)")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var room string
			var seq int64
			if err := rows.Scan(&room, &seq); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%s#%d", room, seq))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	msgs := list(path, `SELECT room, seq FROM messages ORDER BY room, seq`)
	indexed := list(path+searchSuffix, `SELECT room, seq FROM message_words ORDER BY room, seq`)
	if !slices.Equal(msgs, indexed) {
		t.Fatalf("the search index holds %d rows, the messages table %d:\nindex:    %v\nmessages: %v", len(indexed), len(msgs), indexed, msgs)
	}
}

// wantFound fails t unless searching room for word finds exactly the seqs want, best first.
func wantFound(t *testing.T, s *Store, room, word string, want ...int64) {
	t.Helper()
	msgs, err := s.Search(t.Context(), room, []string{word}, 50)
	if err != nil {
		t.Fatalf("search %s for %q: %v", room, word, err)
	}
	var got []int64
	for _, m := range msgs {
		got = append(got, m.Seq)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("search %s for %q = %v, want %v", room, word, got, want)
	}
}

// TestSearchIndexByBatch: appends that share transactions, a third of them refused as repeats
// (refused before they write, or rolled back with their batch, which runs again without them), and an imported room, all end up in the search index
// once each, and only the stored ones.
func TestSearchIndexByBatch(t *testing.T) {
	eachSole(t, func(t *testing.T, s *Store) {
		storetest.MustCreateRoom(t, s, "r")
		storetest.MustCreateRoom(t, s, "q")
		var wg sync.WaitGroup
		for i := range 60 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Every third post repeats the one before it: one of the two is refused,
				// and must not be indexed.
				n := i - i%3/2
				room, seat := "r", fmt.Sprintf("s%d", n%4)
				if n%5 == 0 {
					room = "q"
				}
				body := fmt.Sprintf("word%d shared", n)
				_, err := s.Append(context.Background(), &parley.Append{
					Message:    &parley.Message{Room: room, Seat: seat, Time: time.Now(), Format: parley.FormatText, Body: body, Hash: []byte(room + seat + body)},
					DedupSince: time.Now().Add(-time.Hour), DedupLast: 500,
				})
				if err != nil && parley.ErrorCode(err) != parley.ECONFLICT {
					t.Errorf("append %d: %v", i, err)
				}
			}()
		}
		wg.Wait()
		a := storetest.ArchiveOf(t, s, "r")
		a.Room.Name = "imported"
		for _, m := range a.Messages {
			m.Room = "imported"
		}
		for _, st := range a.Seats {
			st.Room = "imported"
		}
		a.Asks = nil
		if err := s.ImportRoom(t.Context(), a); err != nil {
			t.Fatalf("import: %v", err)
		}
		// The import writes the room's seat_index entries with it: none of its messages wait.
		if waiting := roomTail(t, s, "imported"); waiting != 0 || len(a.Messages) == 0 {
			t.Fatalf("after importing %d messages, %d wait for their seat_index entries", len(a.Messages), waiting)
		}
		checkSeatIndex(t, s, s.dedup.on)
		// An archive without a room is refused, not a panic of the caches' upkeep.
		for _, bad := range []*parley.RoomArchive{nil, {}} {
			if err := s.ImportRoom(t.Context(), bad); parley.ErrorCode(err) != parley.EINVALID {
				t.Fatalf("import of %+v: %v, want EINVALID", bad, err)
			}
		}
		rs, err := s.Messages(t.Context(), "r", 0, 0)
		if err != nil || len(rs) == 0 {
			t.Fatalf("messages: %d, %v", len(rs), err)
		}
		m := rs[len(rs)-1]
		word := strings.Fields(m.Body)[0]
		wantFound(t, s, "r", word, m.Seq)
		wantFound(t, s, "imported", word, m.Seq)
		indexBehind(t, s)
		wantIndexExact(t, s.path)
	})
}

// TestSearchIndexUpgrade: a database written by a parley whose search index was kept by the
// trigger of migration 0003 loses the trigger when opened (migration 0004), keeps every
// message it had indexed, and the committer indexes what comes after, each message once.
func TestSearchIndexUpgrade(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	// The database as the previous parley left it: migrations up to 0003 and two messages
	// its appends stored (the trigger indexed them).
	db := openAtMigration(t, path, "migrations/0001_init.sql", "migrations/0002_topic_index.sql", "migrations/0003_search.sql")
	for _, q := range []string{
		`INSERT INTO rooms (name, policy, created_at, last_seq) VALUES ('r', '{}', 0, 2)`,
		`INSERT INTO messages (room, seq, seat, time, format, body) VALUES ('r', 1, 'a', 0, 'text', CAST('redis window before' AS BLOB))`,
		`INSERT INTO messages (room, seq, seat, time, format, body) VALUES ('r', 2, 'b', 0, 'text', CAST('cache before' AS BLOB))`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	var triggers int
	if err := s.read.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE type = 'trigger'`).Scan(&triggers); err != nil || triggers != 0 {
		t.Fatalf("triggers after the upgrade: %d, %v; want none", triggers, err)
	}
	storetest.MustAppend(t, s, &parley.Append{Message: &parley.Message{Room: "r", Seat: "a", Time: time.Now(), Format: parley.FormatText, Body: "redis after", Hash: []byte("3")}})
	wantFound(t, s, "r", "before", 2, 1)
	wantFound(t, s, "r", "after", 3)
	wantFound(t, s, "r", "redis", 3, 1)
	wantIndexExact(t, s.path) // the searches brought the index up to date
}

// indexBehind brings the search index of every room up to date, as a search does for its room.
func indexBehind(t *testing.T, s *Store) {
	t.Helper()
	rows, err := s.read.Query(`SELECT name FROM rooms ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var rooms []string
	for rows.Next() {
		var room string
		if err := rows.Scan(&room); err != nil {
			t.Fatal(err)
		}
		rooms = append(rooms, room)
	}
	rows.Close()
	for _, room := range rooms {
		if err := s.search.current(t.Context(), room); err != nil {
			t.Fatal(err)
		}
	}
}

// WantIndexExact is wantIndexExact for the tests outside the package (TestCrash).
var WantIndexExact = wantIndexExact

// NoSearchIndex opens a store without its search index, for the benchmark of what the index
// costs a post (BenchmarkSearchIndex).
func NoSearchIndex() Option { return func(s *Store) { s.noSearch = true } }

// openAtMigration opens a new SQLite database at path migrated only as far as the named
// migrations, as an older parley left it.
func openAtMigration(t *testing.T, path string, names ...string) *sql.DB {
	t.Helper()
	old := fstest.MapFS{}
	for _, name := range names {
		b, err := fs.ReadFile(migrations, name)
		if err != nil {
			t.Fatal(err)
		}
		old[name] = &fstest.MapFile{Data: b}
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlstore.Migrate(t.Context(), sqlDB{db}, dialect{}, old, createMigrations); err != nil {
		t.Fatalf("old migrations: %v", err)
	}
	return db
}
