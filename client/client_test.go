package client_test

import (
	"testing"

	"github.com/parleyhq/parley/client"
	"github.com/parleyhq/parley/internal/pgtest"
	"github.com/parleyhq/parley/internal/servertest"
	"github.com/parleyhq/parley/internal/servicetest"
)

func TestMain(m *testing.M) { servertest.Main(m) }

// remote returns a servicetest factory: a real server on 127.0.0.1 (in process, with the
// same handler as `parley serve`) and a client of it.
func remote(pg bool) servicetest.Factory {
	return func(t *testing.T) servicetest.Env {
		opts := servertest.InProcessOptions{}
		if pg {
			opts.PostgresDSN = pgtest.DSN(t)
		}
		s := servertest.InProcess(t, opts)
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
func TestServiceOverHTTP(t *testing.T) { servicetest.Run(t, remote(false)) }

// TestServiceOverHTTPPostgres is the same on PostgreSQL.
func TestServiceOverHTTPPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("PostgreSQL: skipped in -short mode")
	}
	servicetest.Run(t, remote(true))
}
