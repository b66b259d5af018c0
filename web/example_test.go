package web_test

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/web"
)

// The server mounts the UI at / (its API lives under /v1/, the MCP endpoint at /mcp).
func ExampleNewHandler() {
	var svc parley.RoomService // a *room.Service in `parley serve`
	ctx := context.Background()
	mux := http.NewServeMux()
	mux.Handle("/", web.NewHandler(svc, slog.Default(), web.Options{Done: ctx.Done()}))
}
