package main

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/sqlitetest"
	"github.com/parleyhq/parley/mcp"
	"github.com/parleyhq/parley/room"
)

// buildParley builds this command into dir, as an MCP client would find it on PATH.
func buildParley(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "parley")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// mcpServer serves a real room service over real SQLite, with the MCP endpoint the bridge
// forwards to, and returns its URL and the tokens of seats ana and bo of room limiter.
func mcpServer(t *testing.T) (svc *room.Service, url string, tokens map[string]string) {
	t.Helper()
	ctx := t.Context()
	store := sqlitetest.Open(t)
	svc, err := room.New(store, room.Config{AdminToken: "admin-secret-for-tests", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	admin, err := svc.Authenticate(ctx, "admin-secret-for-tests")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateRoom(ctx, admin, "limiter", nil); err != nil {
		t.Fatal(err)
	}
	tokens = map[string]string{}
	for _, name := range []string{"ana", "bo"} {
		_, tok, err := svc.AddSeat(ctx, admin, "limiter", name, parley.RoleAgent)
		if err != nil {
			t.Fatal(err)
		}
		tokens[name] = tok
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewHandler(svc, nil, mcp.WithRenderer(room.Renderer{})))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return svc, srv.URL, tokens
}

func bridgeText(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestMCPBridge builds parley and spawns `parley mcp` as an MCP client would (Codex, for
// one), talking to it over stdio.
func TestMCPBridge(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildParley(t, t.TempDir())
	t.Run("forwards", func(t *testing.T) { testBridgeForwards(t, bin) })
	t.Run("refuses", func(t *testing.T) { testBridgeRefuses(t, bin) })
}

// testBridgeForwards: the bridge offers the server's tools and forwards calls as the seat
// whose token it was given in the environment.
func testBridgeForwards(t *testing.T, bin string) {
	svc, url, tokens := mcpServer(t)

	cmd := exec.Command(bin, "mcp", "--url", url, "--room", "limiter")
	cmd.Env = append(os.Environ(), "PARLEY_TOKEN="+tokens["ana"])
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	client := sdk.NewClient(&sdk.Implementation{Name: "stdio-test", Version: "v0"}, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to parley mcp: %v\nstderr: %s", err, stderr.String())
	}
	defer cs.Close()

	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	if got := strings.Join(names, ","); got != "inbox,lint,post,read,search,state,whoami" {
		t.Errorf("bridge tools = %s", got)
	}

	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if err != nil || res.IsError || !strings.Contains(bridgeText(res), "seat ana") {
		t.Fatalf("whoami through the bridge: %v %+v", err, res)
	}
	body := "v1 request limiter to bo n=1\nreq add a token bucket\n"
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "post", Arguments: map[string]any{"body": body}})
	if err != nil || res.IsError || !strings.Contains(bridgeText(res), "posted #1") {
		t.Fatalf("post through the bridge: %v %s", err, bridgeText(res))
	}
	// The post is in the room, as ana.
	bo, err := svc.Authenticate(ctx, tokens["bo"])
	if err != nil {
		t.Fatal(err)
	}
	hist, _, err := svc.History(ctx, bo, "limiter", 0, 0)
	if err != nil || !strings.HasPrefix(string(hist), "#1 ana ") || !strings.Contains(string(hist), body) {
		t.Fatalf("history after the bridged post: %v %q", err, hist)
	}
	// A tool error crosses the bridge as a tool error, with the server's words.
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "post", Arguments: map[string]any{"body": body}})
	if err != nil || !res.IsError || !strings.Contains(bridgeText(res), "conflict") {
		t.Fatalf("repeat through the bridge: %v %s", err, bridgeText(res))
	}
	// The read cursor lives in the server's session behind the bridge.
	res, _ = cs.CallTool(ctx, &sdk.CallToolParams{Name: "read", Arguments: map[string]any{}})
	if !strings.HasPrefix(bridgeText(res), "#1 ana ") {
		t.Errorf("first read: %s", bridgeText(res))
	}
	res, _ = cs.CallTool(ctx, &sdk.CallToolParams{Name: "read", Arguments: map[string]any{}})
	if !strings.HasPrefix(bridgeText(res), "no new messages after #1") {
		t.Errorf("second read: %s", bridgeText(res))
	}
}

// testBridgeRefuses: the bridge refuses to start for a token of another room, or a bad
// token, and says why on stderr; stdout stays clean for MCP.
func testBridgeRefuses(t *testing.T, bin string) {
	_, url, tokens := mcpServer(t)
	for _, tc := range []struct {
		name, token, room, want string
		code                    int
	}{
		{"wrong room", tokens["ana"], "other", "not of room other", 1},
		{"bad token", "not-a-token", "", "401", 1},
		{"no token", "", "", "no token", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), bin, "mcp", "--url", url, "--room", tc.room)
			cmd.Env = append(os.Environ(), "PARLEY_TOKEN="+tc.token, "PARLEY_URL=", "PARLEY_ROOM=")
			cmd.Stdin = strings.NewReader("")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := cmd.ProcessState.ExitCode()
			if err == nil || code != tc.code || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d mentioning %q", code, stderr.String(), tc.code, tc.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout is not clean: %q", stdout.String())
			}
		})
	}
}

func TestMCPHelp(t *testing.T) {
	var out bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &out, getenv: func(string) string { return "" }}
	if code := dispatch(t.Context(), e, []string{"mcp", "--help"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"Usage: parley mcp", "PARLEY_TOKEN", "--url", "mcp_servers.parley"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, out.String())
		}
	}
}
