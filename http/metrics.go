package http

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/metrics"
)

// WithMetrics sets the registry the server records its requests into and serves at
// /metrics; `parley serve` passes the one the room service reports to (room.Config.Observer),
// so lapses, evidence verdicts, refusals and store appends show there too. Without it the
// server makes a registry of its own, which holds the HTTP series and the runtime collectors.
func WithMetrics(m *metrics.Metrics) Option { return func(s *Server) { s.metrics = m } }

// countRooms registers the parley_rooms gauge on the server's registry. The gauge counts
// every room, so it asks as the server's admin; the count is the only thing exposed.
func (s *Server) countRooms() {
	s.metrics.CountRooms(func() (int, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		rooms, err := s.svc.Rooms(ctx, &parley.Caller{Admin: true})
		if err != nil {
			return 0, fmt.Errorf("count rooms: %w", err)
		}
		return len(rooms), nil
	})
}

// metricsLog hands the exposition handler's errors (a failed collector) to the server's log.
type metricsLog struct{ s *Server }

func (l metricsLog) Println(v ...any) {
	l.s.log.Error("metrics: " + strings.TrimSpace(fmt.Sprintln(v...)))
}

func (s *Server) metricsHandler() http.Handler { return s.metrics.Handler(metricsLog{s}) }

// streamEdge names the edge of an event stream by its route pattern, for the open-streams
// gauge: the API's GET …/events, the MCP endpoint, or the web UI (everything mounted at "/").
func streamEdge(pattern string) string {
	switch {
	case strings.Contains(pattern, "/v1/"):
		return "api"
	case strings.Contains(pattern, "/mcp"):
		return "mcp"
	default:
		return "web"
	}
}
