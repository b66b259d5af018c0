package pgtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { Main(m) }

func TestDSN(t *testing.T) {
	var names [2]string
	t.Run("fresh", func(t *testing.T) {
		for i := range names {
			dsn := DSN(t)
			conn, err := pgx.Connect(t.Context(), dsn)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			var tables int
			if err := conn.QueryRow(t.Context(), `SELECT current_database(),
				(SELECT count(*) FROM pg_tables WHERE schemaname = 'public')`).Scan(&names[i], &tables); err != nil {
				t.Fatalf("query: %v", err)
			}
			conn.Close(context.Background())
			if tables != 0 {
				t.Fatalf("database %s has %d tables, want a fresh one", names[i], tables)
			}
		}
		if names[0] == names[1] {
			t.Fatalf("two calls gave the same database %s", names[0])
		}
	})
	// The subtest's cleanups have dropped both databases.
	base, err := adminDSN()
	if err != nil {
		t.Fatalf("admin: %v", err)
	}
	conn, err := pgx.Connect(t.Context(), base)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(context.Background())
	var left int
	if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_database WHERE datname = ANY($1)`, names[:]).Scan(&left); err != nil {
		t.Fatalf("query: %v", err)
	}
	if left != 0 {
		t.Fatalf("%d of the test databases %v are still there after the test", left, names)
	}
}

func TestWithDatabase(t *testing.T) {
	for _, tt := range []struct{ dsn, want string }{
		{"postgres://u:p@db:5432/postgres?sslmode=disable", "postgres://u:p@db:5432/x?sslmode=disable"},
		{"postgresql://localhost", "postgresql://localhost/x"},
		{"host=127.0.0.1 port=5432 user=postgres dbname=postgres", "host=127.0.0.1 port=5432 user=postgres dbname=postgres dbname=x"},
	} {
		got, err := withDatabase(tt.dsn, "x")
		if err != nil || got != tt.want {
			t.Errorf("withDatabase(%q) = %q, %v, want %q", tt.dsn, got, err, tt.want)
		}
		cfg, err := pgx.ParseConfig(got)
		if err != nil {
			t.Errorf("%q does not parse: %v", got, err)
		} else if cfg.Database != "x" {
			t.Errorf("%q parses to database %q, want x", got, cfg.Database)
		}
	}
}
