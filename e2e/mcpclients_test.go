package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/internal/servertest"
)

// mcpClientsDir is the node project with the official MCP TypeScript SDK and the MCP
// Inspector, pinned in its package.json and package-lock.json (`npm ci` there installs them).
const mcpClientsDir = "mcpclients"

// nodeClients returns the node binary and the project's node_modules, or skips (fails under
// PARLEY_TEST_REQUIRE_ALL=1) with how to get them.
func nodeClients(t *testing.T) (node string) {
	t.Helper()
	fail := func(msg string) {
		if os.Getenv("PARLEY_TEST_REQUIRE_ALL") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		fail("no node on PATH: the MCP client tests run the TypeScript SDK and the Inspector CLI under node")
	}
	if _, err := os.Stat(filepath.Join(mcpClientsDir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		fail("e2e/mcpclients/node_modules is absent: run `npm ci` in e2e/mcpclients to run the MCP client tests")
	}
	return node
}

// inspectorCalls are the MCP Inspector CLI's calls, one line each: the tool, the arguments
// as its --tool-arg key=value pairs, and text the result must hold ("" = any result that is
// not an error). The Inspector parses each value as JSON when it can and then converts the
// strings to the type the schema names: `after=1` arrives as the integer 1 only because the
// schema says "integer", and `topic=2026` arrives as the number 2026, which the server reads
// as the topic "2026" (the topic of the Inspector's post).
var inspectorCalls = []struct {
	tool string
	args []string
	want string
}{
	{tool: "whoami", want: "seat inspector"},
	{tool: "post", args: []string{"body=v1 note 2026 to all n=1\nposted by the Inspector CLI\n"}, want: "posted #3"},
	{tool: "read", args: []string{"after=2", "wait=1"}, want: "#3 inspector "},
	{tool: "post", args: []string{"intent=report", "topic=limiter", `to=["all"]`, `lines=["composed by parts in the Inspector"]`}, want: "posted #4"},
	{tool: "search", args: []string{"query=Inspector composed", "limit=5"}, want: "#4 inspector "},
	{tool: "inbox", want: "inbox"},
	{tool: "state", args: []string{"topic=limiter"}, want: "state limiter"},
	{tool: "state", args: []string{"topic=2026"}, want: "state 2026"},
	{tool: "lint", args: []string{"body=v1 note limiter to all n=1\none fact\n"}},
}

// TestMCPClients runs the official MCP TypeScript SDK client (sdk-client.mjs) and the MCP
// Inspector CLI against the real `parley serve`: every tool that tools/list names must be
// called by each, with arguments as each passes them, and every call must succeed.
func TestMCPClients(t *testing.T) {
	parley(t)
	node := nodeClients(t)
	s := servertest.Start(t, "mcpclients", servertest.Options{DB: "sqlite:" + filepath.Join(t.TempDir(), "parley.db")})
	s.CreateRoom(t, "team", servertest.Generous())
	tsSeat := s.AddSeat(t, "team", "tssdk", "agent")
	inspSeat := s.AddSeat(t, "team", "inspector", "agent")
	home := t.TempDir() // the Inspector keeps a catalog under $HOME
	env := append(servertest.CleanEnv(), "HOME="+home, "MCP_CATALOG_PATH="+filepath.Join(home, "mcp.json"), "NO_COLOR=1")
	run := func(extraEnv []string, name string, args ...string) (stdout, stderr string, err error) {
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = mcpClientsDir
		cmd.Env = append(slices.Clone(env), extraEnv...)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err = cmd.Run()
		return o.String(), e.String(), err
	}

	// The TypeScript client posts #1 and #2 (by parts), the Inspector #3 and #4: its read
	// after 2 must show #3 on.
	var listed []string
	t.Run("typescript sdk", func(t *testing.T) {
		out, errOut, err := run([]string{"PARLEY_MCP_URL=" + s.URL + "/mcp", "PARLEY_TOKEN=" + tsSeat}, node, "sdk-client.mjs")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		var summary struct{ Listed, Called, Missing []string }
		if len(lines) == 0 || json.Unmarshal([]byte(lines[len(lines)-1]), &summary) != nil {
			t.Fatalf("sdk-client.mjs: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
		}
		listed = summary.Listed
		for _, l := range lines[:len(lines)-1] {
			var c struct {
				Tool    string
				Args    map[string]any
				IsError bool
				Text    string
			}
			if json.Unmarshal([]byte(l), &c) != nil {
				t.Errorf("not a call's line: %s", l)
				continue
			}
			if c.IsError {
				t.Errorf("%s %v through the TypeScript SDK: tool error:\n%s", c.Tool, c.Args, c.Text)
			}
			if c.Tool == "whoami" && !strings.Contains(c.Text, "seat tssdk") {
				t.Errorf("whoami through the TypeScript SDK:\n%s", c.Text)
			}
		}
		for _, tool := range summary.Listed {
			if !slices.Contains(summary.Called, tool) {
				t.Errorf("tools/list names %s, which sdk-client.mjs does not call: add a line to its calls", tool)
			}
		}
		if err != nil && !t.Failed() {
			t.Errorf("sdk-client.mjs: %v\n%s", err, errOut)
		}
	})
	if len(listed) == 0 {
		t.Fatal("no tools/list from the TypeScript SDK client")
	}

	inspector := []string{filepath.Join("node_modules", ".bin", "mcp-inspector"), "--cli", s.URL + "/mcp",
		"--transport", "http", "--header", "Authorization: Bearer " + inspSeat}
	t.Run("inspector cli", func(t *testing.T) {
		// tools/list with --strict: the Inspector's own check that the schemas are portable
		// (it exits 6 on an error-severity finding).
		out, errOut, err := run(nil, inspector[0], append(inspector[1:], "--method", "tools/list", "--strict")...)
		if err != nil {
			t.Fatalf("inspector tools/list --strict: %v\n%s\n%s", err, out, errOut)
		}
		var list struct{ Tools []struct{ Name string } }
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatalf("inspector tools/list: %v\n%s", err, out)
		}
		var names []string
		for _, tl := range list.Tools {
			names = append(names, tl.Name)
		}
		slices.Sort(names)
		if !slices.Equal(names, listed) {
			t.Errorf("the Inspector lists %v, the TypeScript SDK %v", names, listed)
		}
		called := map[string]bool{}
		for _, c := range inspectorCalls {
			args := append(slices.Clone(inspector[1:]), "--method", "tools/call", "--tool-name", c.tool)
			for _, a := range c.args {
				args = append(args, "--tool-arg", a)
			}
			out, errOut, err := run(nil, inspector[0], args...)
			var res struct {
				Content []struct{ Type, Text string }
				IsError bool
			}
			if err != nil || json.Unmarshal([]byte(out), &res) != nil || len(res.Content) == 0 {
				t.Errorf("inspector %s %q: %v\nstdout:\n%s\nstderr:\n%s", c.tool, c.args, err, out, errOut)
				continue
			}
			text := res.Content[0].Text
			if res.IsError || !strings.Contains(text, c.want) {
				t.Errorf("inspector %s %q: error %v, want text holding %q:\n%s", c.tool, c.args, res.IsError, c.want, text)
			}
			if c.tool == "read" && (strings.Contains(text, "\n#1 ") || strings.HasPrefix(text, "#1 ") || strings.Contains(text, "\n#2 ") || strings.HasPrefix(text, "#2 ")) {
				t.Errorf("inspector read %q returned #1 or #2, which are not after 2:\n%s", c.args, text)
			}
			called[c.tool] = true
		}
		for _, tool := range listed {
			if !called[tool] {
				t.Errorf("tools/list names %s, which the Inspector CLI does not call: add a line to inspectorCalls", tool)
			}
		}
	})
}
