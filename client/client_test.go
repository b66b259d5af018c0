package client_test

import (
	"path/filepath"
	"testing"

	"github.com/parleyhq/parley/client"
	"github.com/parleyhq/parley/internal/pgtest"
	"github.com/parleyhq/parley/internal/servertest"
	"github.com/parleyhq/parley/internal/servicetest"
)

func TestMain(m *testing.M) { servertest.Main(m) }

// remote returns a servicetest factory: a real server on 127.0.0.1 (in process, with the
// same handler as `parley serve`, or the built binary) and a client of it.
func remote(pg, binary bool) servicetest.Factory {
	return func(t *testing.T) servicetest.Env {
		var s *servertest.Server
		switch {
		case binary:
			s = servertest.Start(t, "parley serve", servertest.Options{DB: "sqlite:" + filepath.Join(t.TempDir(), "parley.db")})
		case pg:
			s = servertest.InProcess(t, servertest.InProcessOptions{PostgresDSN: pgtest.DSN(t)})
		default:
			s = servertest.InProcess(t, servertest.InProcessOptions{})
		}
		c, err := client.New(s.URL, "")
		if err != nil {
			t.Fatal(err)
		}
		admin, err := c.Authenticate(t.Context(), s.Admin)
		if err != nil {
			t.Fatal(err)
		}
		return servicetest.Env{Svc: c, Admin: admin, AdminToken: s.Admin}
	}
}

// TestServiceOverHTTP runs the RoomService behaviour suite through the client against a real
// server on SQLite: every case passes as it does against room.Service in process.
func TestServiceOverHTTP(t *testing.T) { servicetest.Run(t, remote(false, false)) }

// TestServiceOverHTTPPostgres is the same on PostgreSQL.
func TestServiceOverHTTPPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("PostgreSQL: skipped in -short mode")
	}
	servicetest.Run(t, remote(true, false))
}

// TestServiceOverHTTPBinary is the same against the parley binary itself (`parley serve`).
func TestServiceOverHTTPBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the binary: skipped in -short mode")
	}
	servicetest.Run(t, remote(false, true))
}
