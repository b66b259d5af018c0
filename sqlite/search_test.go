package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/fulltext"
	"github.com/parleyhq/parley/sqlite"
	"github.com/parleyhq/parley/storetest"
)

// TestSearchBackfill: a database made before migration 0003 is indexed when opened.
func TestSearchBackfill(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	storetest.Backfill(t, func(t *testing.T) parley.Store {
		s, err := sqlite.Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, func(t *testing.T) {
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		unindex(t, path)
		if _, err := db.Exec(`DELETE FROM schema_migrations WHERE version >= 3`); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzSearchQuery runs what anyone may type through the query translation into a real FTS5
// index: whatever the text, the search must not fail (no FTS5 syntax error, no injection), and
// it finds only messages that hold a word of it.
func FuzzSearchQuery(f *testing.F) {
	for _, q := range []string{`redis window`, `"redis`, `redis*`, `NEAR(redis window, 2)`, `-redis`,
		`body:redis`, `room:s`, `redis OR window AND NOT x`, `^redis`, `'; DROP TABLE messages; --`,
		`"" "`, `(((`, `é Ünïcödé 日本語`, "\xff\xfe", "a\x00b", `{redis}`, `redis + window`} {
		f.Add(q)
	}
	s, err := sqlite.Open(context.Background(), filepath.Join(f.TempDir(), "parley.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	storetest.MustCreateRoom(f, s, "s")
	bodies := map[int64]string{}
	for i, line := range []string{"redis window chosen", "NEAR and OR are words here", "é Ünïcödé 日本語", "drop table messages"} {
		body := "v1 note cache to all n=1\n" + line + "\n"
		m := storetest.MustAppend(f, s, &parley.Append{Message: &parley.Message{Room: "s", Seat: "alice", Format: parley.FormatConvention, Body: body}})
		bodies[m.Seq] = body
		_ = i
	}
	f.Fuzz(func(t *testing.T, q string) {
		words := fulltext.Words(q)
		msgs, err := s.Search(context.Background(), "s", words, 10)
		if err != nil {
			t.Fatalf("Search(%q → %q): %v", q, words, err)
		}
		for _, m := range msgs {
			if !fulltext.Holds(strings.ToLower(bodies[m.Seq]), words) {
				t.Fatalf("Search(%q → %q) found #%d, which holds none of the words: %q", q, words, m.Seq, bodies[m.Seq])
			}
		}
	})
}

// unindex takes the search index away from the database at path, as a parley from before
// migration 0003 left it: no index in the database (0003 made one there, 0006 moved it out),
// no search file beside it.
func unindex(tb testing.TB, path string) {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	// SQLite 3.54 leaves a contentless_unindexed table's _content shadow table behind when
	// the table is dropped; a database from before 0003 has none.
	for _, q := range []string{`DROP TRIGGER IF EXISTS message_words_index`, `DROP TABLE IF EXISTS message_words`,
		`DROP TABLE IF EXISTS message_words_content`, `DROP TABLE IF EXISTS search_progress`, `DROP TABLE IF EXISTS database_id`} {
		if _, err := db.Exec(q); err != nil {
			tb.Fatalf("%s: %v", q, err)
		}
	}
	for _, suffix := range []string{"-search", "-search-wal", "-search-shm"} {
		if err := os.Remove(path + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			tb.Fatal(err)
		}
	}
}

// BenchmarkSearchIndex: what the search index adds to an append (see storetest): the
// indexer's work, which runs beside the committer, shows in cpu-µs/op more than in the time.
//
//	go test ./sqlite -run '^$' -bench SearchIndex -count 6
func BenchmarkSearchIndex(b *testing.B) {
	storetest.BenchSearchIndex(b, func(b *testing.B, indexed bool) parley.Store {
		var opts []sqlite.Option
		if !indexed {
			opts = append(opts, sqlite.NoSearchIndex())
		}
		s, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "parley.db"), opts...)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	})
}

func BenchmarkSearch(b *testing.B) { storetest.BenchSearch(b, MustOpen(b)) }
