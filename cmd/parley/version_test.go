package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyhq/parley/internal/version"
)

// tokenTransport sends a bearer token on every request.
type tokenTransport struct{ token string }

func (b tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestMCPServerReportsTheVersion: the MCP server's serverInfo.version is the string `parley
// version` prints, not a version of its own.
func TestMCPServerReportsTheVersion(t *testing.T) {
	_, url, tokens := mcpServer(t)
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil)
	cs, err := client.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: url + "/mcp",
		HTTPClient: &http.Client{Transport: tokenTransport{tokens["ana"]}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ServerInfo.Version; got != version.String() {
		t.Errorf("serverInfo.version = %q, parley version says %q", got, version.String())
	}
}

// TestReleaseVersion builds parley as a release is built, with its version set by -ldflags,
// and checks every place that shows a version shows that one: `parley version`, the stdio
// bridge's serverInfo, and the User-Agent of the CLI's and the bridge's requests.
func TestReleaseVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	const v = "v9.8.7-release-test"
	bin := filepath.Join(t.TempDir(), "parley")
	out, err := exec.Command("go", "build", "-o", bin, "-ldflags", "-X github.com/parleyhq/parley/internal/version.version="+v, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	out, err = exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "parley "+v+" (go") {
		t.Errorf("parley version: %q, %v", out, err)
	}

	// User-Agent: a server that only records it.
	var mu sync.Mutex
	var agents []string
	rec := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		agents = append(agents, r.Header.Get("User-Agent"))
		mu.Unlock()
		http.Error(w, `{"error":{"code":"unauthorized","message":"no"}}`, http.StatusUnauthorized)
	}))
	defer rec.Close()
	for _, args := range [][]string{{"read", "team"}, {"mcp"}} {
		cmd := exec.Command(bin, append(args, "--url", rec.URL, "--token", "pk_x")...)
		cmd.Stdin = strings.NewReader("")
		cmd.Run() // refused: only the request matters
	}
	mu.Lock()
	got := strings.Join(agents, " | ")
	mu.Unlock()
	if !strings.Contains(got, "parley/"+v) || !strings.Contains(got, "parley-mcp-bridge/"+v) {
		t.Errorf("User-Agents sent: %q; want parley/%s from the CLI and parley-mcp-bridge/%s from the bridge", got, v, v)
	}

	// The bridge's serverInfo, as an MCP client on stdio sees it.
	_, url, tokens := mcpServer(t)
	cmd := exec.Command(bin, "mcp", "--url", url, "--room", "limiter")
	cmd.Env = append(os.Environ(), "PARLEY_TOKEN="+tokens["ana"])
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "stdio-test", Version: "v0"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to parley mcp: %v", err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ServerInfo.Version; got != v {
		t.Errorf("bridge serverInfo.version = %q, want %q", got, v)
	}
}
