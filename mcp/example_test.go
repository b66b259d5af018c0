package mcp_test

import (
	"context"
	"log/slog"
	"net/http"
	"os"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/mcp"
	"github.com/parleyhq/parley/room"
)

// The server mounts the endpoint at /mcp; clients send a seat token as a bearer token.
func ExampleNewHandler() {
	var svc parley.RoomService // a *room.Service in `parley serve`
	ctx := context.Background()
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewHandler(svc, slog.Default(), mcp.ShutdownOn(ctx.Done()),
		mcp.WithRenderer(room.Renderer{}))) // convention text for inboxes and state records
}

// `parley mcp` is this: MCP on stdio, forwarded to the server as the token's seat.
func ExampleBridge() {
	err := mcp.Bridge(context.Background(), mcp.BridgeConfig{
		URL:   "http://127.0.0.1:7070",
		Token: os.Getenv("PARLEY_TOKEN"),
		Room:  "limiter",
	}, &sdk.StdioTransport{})
	if err != nil {
		slog.Error("bridge", "err", err)
	}
}
