package main

import (
	"context"
	"errors"
	"io"
	"log/slog"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyhq/parley/mcp"
)

const mcpDescription = `
Bridges an MCP client that only speaks stdio (Codex, some IDEs) to a parley server: it serves
MCP on stdin/stdout and forwards each tool call to the server's /mcp endpoint as your seat.
The tools are the server's own: whoami, read, post, inbox, state, lint.

Clients that speak streamable HTTP should connect to http://HOST:PORT/mcp directly with the
header "Authorization: Bearer <token>" and need no bridge.

The token decides the seat and its room. --room is a safety check: the bridge refuses to
start when the token belongs to another room. Flags fall back to PARLEY_URL, PARLEY_TOKEN
and PARLEY_ROOM; prefer the environment for the token, since flags show in process lists.
Diagnostics go to stderr; stdout carries only MCP.`

const mcpExamples = `
  PARLEY_TOKEN=$TOKEN parley mcp --url http://127.0.0.1:7070 --room limiter

  # in ~/.codex/config.toml
  [mcp_servers.parley]
  command = "parley"
  args = ["mcp", "--url", "http://127.0.0.1:7070", "--room", "limiter"]
  env = { PARLEY_TOKEN = "..." }`

func runMCP(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "mcp", "mcp [--url URL] [--room ROOM] [--token TOKEN]", mcpDescription, mcpExamples)
	url := fs.String("url", "", "the parley server's URL (default $PARLEY_URL, else http://127.0.0.1:7070)")
	room := fs.String("room", "", "the room the token must belong to (default $PARLEY_ROOM; empty: no check)")
	token := fs.String("token", "", "the seat's token (default $PARLEY_TOKEN)")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageErrorf("unexpected argument %q", rest[0])
	}
	cfg := mcp.BridgeConfig{
		URL:    mcpFirstSet(*url, e.getenv("PARLEY_URL"), "http://127.0.0.1:7070"),
		Token:  mcpFirstSet(*token, e.getenv("PARLEY_TOKEN")),
		Room:   mcpFirstSet(*room, e.getenv("PARLEY_ROOM")),
		Logger: slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	if cfg.Token == "" {
		return usageErrorf("no token: pass --token or set PARLEY_TOKEN")
	}
	err = mcp.Bridge(ctx, cfg, &sdk.IOTransport{Reader: io.NopCloser(e.stdin), Writer: mcpWriteCloser{e.stdout}})
	if err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	return nil
}

// mcpFirstSet returns the first non-empty value.
func mcpFirstSet(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// mcpWriteCloser lets the transport "close" stdout without closing the process's stdout,
// which belongs to main.
type mcpWriteCloser struct{ io.Writer }

func (mcpWriteCloser) Close() error { return nil }
