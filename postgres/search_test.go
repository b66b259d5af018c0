package postgres_test

import (
	"context"
	"testing"

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
		for _, q := range []string{`DROP INDEX messages_words`, `ALTER TABLE messages DROP COLUMN words`,
			`DROP FUNCTION parley_body_text(bytea)`, `DELETE FROM schema_migrations WHERE name = 'migrations/0004_search.sql'`} {
			if _, err := conn.Exec(context.Background(), q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	})
}

// BenchmarkSearchIndex: what the search index (the generated tsvector column and its GIN
// index) adds to an append (see storetest).
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
			if _, err := conn.Exec(context.Background(), `ALTER TABLE messages DROP COLUMN words`); err != nil {
				b.Fatal(err)
			}
		}
		return MustOpen(b, dsn)
	})
}

func BenchmarkSearch(b *testing.B) { storetest.BenchSearch(b, MustOpen(b, pgtest.DSN(b))) }
