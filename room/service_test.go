package room_test

import (
	"log/slog"
	"testing"

	"github.com/parleyhq/parley/internal/servicetest"
	"github.com/parleyhq/parley/internal/sqlitetest"
	"github.com/parleyhq/parley/room"
)

// TestService runs the RoomService behaviour suite against room.Service in process, on
// SQLite. Package client runs the same suite over HTTP.
func TestService(t *testing.T) {
	servicetest.Run(t, func(t *testing.T) servicetest.Env {
		st := sqlitetest.Open(t)
		svc, err := room.New(st, room.Config{AdminToken: adminToken, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		admin, err := svc.Authenticate(t.Context(), adminToken)
		if err != nil {
			t.Fatal(err)
		}
		return servicetest.Env{Svc: svc, Admin: admin, AdminToken: adminToken}
	})
}
