// Package examples holds clients of the HTTP API in other languages (python/, typescript/);
// this test runs each against a real server on 127.0.0.1 and checks what it prints against
// the server's own history and inbox.
package examples

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/internal/pgtest"
	"github.com/parleyhq/parley/internal/servertest"
)

// need skips the test when a tool is missing, except under PARLEY_TEST_REQUIRE_ALL=1 (CI),
// where it fails.
func need(t *testing.T, what, why string) {
	t.Helper()
	if os.Getenv(pgtest.EnvRequireAll) == "1" {
		t.Fatalf("%s: %s (%s=1 requires every suite)", what, why, pgtest.EnvRequireAll)
	}
	t.Skipf("%s: %s", what, why)
}

// room makes a room where lead asks builder something, and returns builder's token: the
// example then posts as builder, reads the room and finds the ask in its inbox.
func room(t *testing.T, srv *servertest.Server, name string) string {
	t.Helper()
	srv.CreateRoom(t, name, nil)
	lead := srv.AddSeat(t, name, "lead", "agent")
	builder := srv.AddSeat(t, name, "builder", "agent")
	ask := "v1 request limiter to builder n=2\nask sliding window or token bucket?, 20991231T1200Z\ndefault silence past the ask time→sliding window\n"
	if r := srv.Call(t, "POST", "/v1/rooms/"+name+"/messages", lead, []byte(ask)); r.Status != 201 {
		t.Fatalf("lead's ask: %s", r)
	}
	return builder
}

// run runs an example and returns its standard output.
func run(t *testing.T, srv *servertest.Server, token string, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = servertest.CleanEnv("PARLEY_URL="+srv.URL, "PARLEY_TOKEN="+token)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%v: %s", err, stderr.String())
	}
	return string(out), nil
}

// checkOutput compares an example's output with what the server holds: the line it posted,
// the room's whole history byte for byte, where it stopped reading, and the ask it owes.
func checkOutput(t *testing.T, srv *servertest.Server, room, token, out string) {
	t.Helper()
	history := srv.History(t, room, token)
	want := "posted #2\n" + history + "read up to #2\n" +
		"owed: #1 from lead: ask sliding window or token bucket?, 20991231T1200Z\n"
	if out != want {
		t.Errorf("the example printed:\n%s\nwant:\n%s", out, want)
	}
	if !strings.Contains(history, "#2 builder ") || !strings.Contains(history, "done limiter sliding window\n") {
		t.Errorf("the example's post is not in history:\n%s", history)
	}
}

func TestPythonExample(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		need(t, "python3", "not on PATH")
	}
	srv := servertest.InProcess(t, servertest.InProcessOptions{})
	token := room(t, srv, "team")
	script := filepath.Join("python", "parley_example.py")
	out, err := run(t, srv, token, py, script, "team")
	if err != nil {
		t.Fatalf("python example: %v\n%s", err, out)
	}
	checkOutput(t, srv, "team", token, out)

	// A refusal reaches the user as the server's message and hint, with a failing status.
	_, err = run(t, srv, "pk_not_a_seat_token", py, script, "team")
	if err == nil || !strings.Contains(err.Error(), "401 unauthorized: ") {
		t.Errorf("python example with a bad token: %v", err)
	}
}

func TestTypeScriptExample(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		need(t, "node", "not on PATH")
	}
	tsc, _ := filepath.Abs(filepath.Join("typescript", "node_modules", ".bin", "tsc"))
	if _, err := os.Stat(tsc); err != nil {
		need(t, "tsc", "run `npm ci` in examples/typescript to install TypeScript")
	}
	// Type-check and compile into a fresh directory, as a module (the example awaits at its
	// top level).
	dist := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, node, tsc, "-p", "typescript", "--outDir", dist).CombinedOutput(); err != nil {
		t.Fatalf("tsc: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dist, "package.json"), []byte(`{"type":"module"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := servertest.InProcess(t, servertest.InProcessOptions{})
	token := room(t, srv, "team")
	out, err := run(t, srv, token, node, filepath.Join(dist, "parley-example.js"), "team")
	if err != nil {
		t.Fatalf("typescript example: %v\n%s", err, out)
	}
	checkOutput(t, srv, "team", token, out)
}
