package e2e_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/parleyhq/parley/internal/pgtest"
	"github.com/parleyhq/parley/internal/servertest"
)

// TestPostgresWarmStart: `parley serve` on PostgreSQL has its pool's connections open (and,
// postgres.TestWarmConns checks, their statements prepared) by the time it says it listens,
// so that its first requests do not wait for PostgreSQL to start backends for them.
func TestPostgresWarmStart(t *testing.T) {
	parley(t)
	dsn := pgtest.DSN(t)
	servertest.Start(t, "serve postgres", servertest.Options{DB: dsn})
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = 'parley'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	// The pool's four, and the connection that listens for appends.
	if n < 5 {
		t.Errorf("%d of the server's connections open when it said it listens, want 5 (4 in the pool and the listener)", n)
	}
}
