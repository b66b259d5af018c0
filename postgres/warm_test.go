package postgres

import (
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/parleyhq/parley/internal/pgtest"
)

// TestWarmConns: with WithWarmConns, Open returns with the connections made and every
// statement of a post's path prepared on each; without it, the pool stays lazy; the DSN's
// pool_max_conns bounds the warm connections and its pool_min_conns sets their number.
func TestWarmConns(t *testing.T) {
	dsn := pgtest.DSN(t)
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	for _, c := range []struct {
		name      string
		dsn       string
		warm      int
		wantConns int32 // open right after Open
		wantMin   int32 // the pool's MinConns
	}{
		{"lazy", dsn, 0, 1, 0}, // the migration's connection
		{"warm", dsn, 4, 4, 4},
		{"max 2", dsn + sep + "pool_max_conns=2", 4, 2, 2},
		{"min from the dsn", dsn + sep + "pool_min_conns=2", 3, 2, 2},
		{"lazy from the dsn", dsn + sep + "pool_min_conns=0", 3, 1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Open(t.Context(), c.dsn, WithWarmConns(c.warm))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			// The migration's connection may come on top of the warm ones.
			if got := s.pool.Stat().IdleConns(); got < c.wantConns || c.wantMin == 0 && got != c.wantConns || got > s.pool.Config().MaxConns {
				t.Errorf("%d connections open right after Open, want %d", got, c.wantConns)
			}
			if got := s.pool.Config().MinConns; got != c.wantMin {
				t.Errorf("MinConns %d, want %d", got, c.wantMin)
			}
			if c.wantMin == 0 {
				return
			}
			// Every warm connection has every statement of warmQueries prepared, and nothing
			// was run: no room, seat or message appeared.
			want := warmQueries()
			slices.Sort(want)
			conns := s.pool.AcquireAllIdle(t.Context()) // every connection Open made, each once
			if len(conns) < int(c.wantConns) {
				t.Fatalf("%d idle connections to look at, want %d", len(conns), c.wantConns)
			}
			for i, conn := range conns {
				rows, err := conn.Query(t.Context(), `SELECT statement FROM pg_prepared_statements`)
				if err != nil {
					t.Fatal(err)
				}
				all, err := pgx.CollectRows(rows, pgx.RowTo[string])
				if err != nil {
					t.Fatal(err)
				}
				got := slices.DeleteFunc(all, func(q string) bool { return !slices.Contains(want, q) })
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Errorf("connection %d: %d of the %d warm statements prepared", i, len(got), len(want))
				}
			}
			for _, conn := range conns {
				conn.Release()
			}
			var n int
			if err := s.pool.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM rooms) + (SELECT count(*) FROM seats) + (SELECT count(*) FROM messages) + (SELECT count(*) FROM rate_buckets)`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("warming wrote %d rows", n)
			}
		})
	}
}
