package postgres_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/pgtest"
	"github.com/parleyhq/parley/postgres"
	"github.com/parleyhq/parley/storetest"
)

// TestSearchBackfill: a database made before migration 0004 is indexed when opened, bodies
// that are not UTF-8 included.
func TestSearchBackfill(t *testing.T) {
	dsn := pgtest.DSN(t)
	storetest.Backfill(t, func(t *testing.T) parley.Store {
		s, err := postgres.Open(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, func(t *testing.T) {
		conn, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		for _, q := range []string{`DROP INDEX messages_words`, `ALTER TABLE messages DROP COLUMN words CASCADE`,
			`DROP FUNCTION parley_words() CASCADE`, `DROP FUNCTION parley_body_text(bytea)`,
			`DELETE FROM schema_migrations WHERE name IN ('migrations/0004_search.sql', 'migrations/0007_words_in_insert.sql')`} {
			if _, err := conn.Exec(context.Background(), q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	})
}

// BenchmarkSearchIndex: what the search index's upkeep (its GIN index, and the trigger that
// fills the words of an insert that leaves them out) adds to an append (see storetest). An
// append computes its words in its own INSERT (migration 0007), with or without the index.
//
//	go test ./postgres -run '^$' -bench SearchIndex -count 6
func BenchmarkSearchIndex(b *testing.B) {
	storetest.BenchSearchIndex(b, func(b *testing.B, indexed bool) parley.Store {
		dsn := pgtest.DSN(b)
		if !indexed {
			s, err := postgres.Open(context.Background(), dsn)
			if err != nil {
				b.Fatal(err)
			}
			s.Close()
			conn, err := pgx.Connect(context.Background(), dsn)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close(context.Background())
			for _, q := range []string{`DROP INDEX messages_words`, `DROP TRIGGER messages_words ON messages`,
				`DROP TRIGGER messages_words_body ON messages`} {
				if _, err := conn.Exec(context.Background(), q); err != nil {
					b.Fatal(err)
				}
			}
		}
		return MustOpen(b, dsn)
	})
}

func BenchmarkSearch(b *testing.B) { storetest.BenchSearch(b, MustOpen(b, pgtest.DSN(b))) }

// TestBodyText: parley_body_text (migration 0004) never fails, reads a body that is UTF-8
// without NUL as its text, and any other with its bytes escaped; the decision agrees with
// Go's utf8.Valid on the edges of RFC 3629.
func TestBodyText(t *testing.T) {
	dsn := pgtest.DSN(t)
	MustOpen(t, dsn) // migrates
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, b := range []string{"", "redis window", "café 😀 日本", "a\x00b", "\xff", "\xc0\xaf", "\xe0\x80\xaf",
		"\xed\xa0\x80", "\xed\x9f\xbf", "\xf4\x8f\xbf\xbf", "\xf4\x90\x80\x80", "\xc3", "\xe2\x82", "x\x80y", "\x7f\x01"} {
		var got string
		if err := conn.QueryRow(t.Context(), `SELECT parley_body_text($1)`, []byte(b)).Scan(&got); err != nil {
			t.Fatalf("parley_body_text(%q): %v", b, err)
		}
		valid := utf8.ValidString(b) && !strings.Contains(b, "\x00")
		if valid && got != b {
			t.Errorf("parley_body_text(%q) = %q, want the text itself", b, got)
		}
		if !valid && (got == b || !strings.Contains(got, `\`)) {
			t.Errorf("parley_body_text(%q) = %q, want its bytes escaped", b, got)
		}
	}
}
