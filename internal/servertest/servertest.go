// Package servertest runs the room server for tests that need the real thing: the parley
// binary built from this module and started as `parley serve` (so that it can be killed with
// SIGKILL and restarted on the same database), or the same wiring in process (so that a test
// can shorten the HTTP server's timeouts). Both listen on 127.0.0.1 only.
//
// A test binary that uses Binary or Start must call Main from its TestMain: it removes the
// built binary and stops the private PostgreSQL server of pgtest when the tests end.
package servertest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/client"
	"github.com/parleyhq/parley/internal/lockedbuf"
	"github.com/parleyhq/parley/internal/pgtest"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildBin  string
	buildErr  error
)

// Main runs the tests, then removes the built binary and stops pgtest's private server.
func Main(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	pgtest.Stop()
	os.Exit(code)
}

// Binary builds cmd/parley once per test binary and returns its path.
func Binary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "parley-servertest-")
		if buildErr != nil {
			return
		}
		buildBin = filepath.Join(buildDir, "parley")
		goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, err := os.Stat(goCmd); err != nil {
			goCmd = "go"
		}
		out, err := exec.Command(goCmd, "build", "-o", buildBin, "github.com/parleyhq/parley/cmd/parley").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("build parley: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return buildBin
}

// NewToken returns a random admin token of the shape the server accepts in
// PARLEY_ADMIN_TOKEN.
func NewToken() string {
	var b [24]byte
	rand.Read(b[:])
	return "admin-" + base64.RawURLEncoding.EncodeToString(b[:])
}

// Server is one room server under test.
type Server struct {
	Name  string
	URL   string // http://127.0.0.1:port (https:// for a server started with --tls-cert)
	Admin string // the admin token

	cmd    *exec.Cmd // nil for an in-process server
	stdout *Buffer
	stderr *Buffer
	done   chan error
	stop   func() // in process: shuts down
}

// Options configure Start.
type Options struct {
	DB    string   // --db: sqlite:PATH or postgres://…
	Admin string   // PARLEY_ADMIN_TOKEN; "" = a new random one
	Args  []string // more flags for `parley serve`
}

var listening = regexp.MustCompile(`parley: listening on (https?://127\.0\.0\.1:\d+)`)

// Start runs `parley serve --addr 127.0.0.1:0` with opts and waits until it says where it
// listens. The process gets SIGKILL when the test ends, if it is still running; a test that
// wants a clean stop calls Stop.
func Start(tb testing.TB, name string, opts Options) *Server {
	tb.Helper()
	if opts.Admin == "" {
		opts.Admin = NewToken()
	}
	s := &Server{Name: name, Admin: opts.Admin, stdout: &Buffer{}, stderr: &Buffer{}, done: make(chan error, 1)}
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--log-level", "warn", "--db", opts.DB}, opts.Args...)
	s.cmd = exec.Command(Binary(tb), args...)
	s.cmd.Env = CleanEnv("PARLEY_ADMIN_TOKEN=" + opts.Admin)
	s.cmd.Stderr = s.stderr
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			s.stdout.Write([]byte(line + "\n"))
			if m := listening.FindStringSubmatch(line); m != nil {
				ready <- m[1]
			}
		}
	}()
	go func() { s.done <- s.cmd.Wait() }()
	tb.Cleanup(func() {
		s.Kill()
		if tb.Failed() {
			tb.Logf("%s stderr (tail):\n%s", name, Tail(s.stderr.String(), 40))
		}
	})
	select {
	case s.URL = <-ready:
	case err := <-s.done:
		s.done <- err
		tb.Fatalf("%s exited before listening: %v\nstdout:\n%s\nstderr:\n%s", name, err, s.stdout, s.stderr)
	case <-time.After(60 * time.Second):
		tb.Fatalf("%s did not say where it listens within 60s\nstderr:\n%s", name, s.stderr)
	}
	return s
}

// Kill ends the process with SIGKILL, as a crash or the OOM killer would, and waits for it.
// For an in-process server it closes the listener and every connection at once.
func (s *Server) Kill() {
	if s.stop != nil {
		s.stop()
		return
	}
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	select {
	case err := <-s.done:
		s.done <- err // already gone
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	err := <-s.done
	s.done <- err
}

// Stderr returns what the server has logged so far.
func (s *Server) Stderr() string { return s.stderr.String() }

// Response is an HTTP answer, read whole.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// ErrorBody is the JSON shape of the server's errors.
type ErrorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Hint    string `json:"hint"`
	} `json:"error"`
	Seq        int64 `json:"seq"`
	RetryAfter int   `json:"retry_after"`
}

// Err decodes an error answer; the zero value when the body is not one.
func (r Response) Err() ErrorBody {
	var e ErrorBody
	json.Unmarshal(r.Body, &e)
	return e
}

// JSON decodes the body into v.
func (r Response) JSON(v any) error { return json.Unmarshal(r.Body, v) }

func (r Response) String() string {
	return fmt.Sprintf("%d %s", r.Status, bytes.TrimSpace(r.Body))
}

// Do sends one request exactly as given and returns the answer whatever its status: the
// helper for tests of the wire itself (statuses, headers, malformed requests). Anything else
// goes through Client. Headers come as name, value pairs. A transport error (the server is
// gone, the connection was cut) is returned as is: crash tests need to tell it apart.
func Do(ctx context.Context, c *http.Client, method, url, token string, body []byte, headers ...string) (Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return Response{}, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return Response{}, err
	}
	return Response{resp.StatusCode, resp.Header, b}, nil
}

// Call is Do with the default client that fails the test on a transport error: a raw
// request, for tests of the wire.
func (s *Server) Call(tb testing.TB, method, path, token string, body []byte, headers ...string) Response {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := Do(ctx, http.DefaultClient, method, s.URL+path, token, body, headers...)
	if err != nil {
		tb.Fatalf("%s %s on %s: %v", method, path, s.Name, err)
	}
	return r
}

// Client returns a typed client of the server (package client) whose token is token.
func (s *Server) Client(token string) *client.Client {
	c, err := client.New(s.URL, token)
	if err != nil {
		panic(err) // s.URL is always http://127.0.0.1:port
	}
	return c
}

// timeout bounds each helper's call, as Call does.
func timeout() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}

// CreateRoom creates a room with the given policy (nil: the default) and fails the test
// otherwise.
func (s *Server) CreateRoom(tb testing.TB, name string, policy map[string]any) {
	tb.Helper()
	var p json.RawMessage
	if policy != nil {
		p, _ = json.Marshal(policy)
	}
	ctx, cancel := timeout()
	defer cancel()
	if _, err := s.Client(s.Admin).CreateRoomJSON(ctx, nil, name, p); err != nil {
		tb.Fatalf("create room %s on %s: %v", name, s.Name, err)
	}
}

// AddSeat adds a seat and returns its token.
func (s *Server) AddSeat(tb testing.TB, room, name, role string) string {
	tb.Helper()
	ctx, cancel := timeout()
	defer cancel()
	_, token, err := s.Client(s.Admin).AddSeat(ctx, nil, room, name, parley.Role(role))
	if err != nil || token == "" {
		tb.Fatalf("add seat %s/%s on %s: %q, %v", room, name, s.Name, token, err)
	}
	return token
}

// Generous is a room policy whose caps a load test does not reach, so that what it measures
// is the server and not the rate limiter. Dedup stays on: it is part of every post's cost.
func Generous() map[string]any {
	return map[string]any{
		"seat_messages_per_minute": 1e7, "seat_burst": 1 << 20,
		"seat_tokens_per_minute":   1 << 30,
		"room_messages_per_minute": 1e8, "room_burst": 1 << 24,
	}
}

// History reads a room's whole history text as token, page by page.
func (s *Server) History(tb testing.TB, room, token string) string {
	tb.Helper()
	ctx, cancel := timeout()
	defer cancel()
	b, _, err := s.Client(token).HistoryAll(ctx, nil, room, 0)
	if err != nil {
		tb.Fatalf("history of %s on %s: %v", room, s.Name, err)
	}
	return string(b)
}

// Entry is one message as history shows it.
type Entry struct {
	Seq  int64
	Seat string
	Time string
	Body string // the body and notes, without the header line and the final blank line
}

var header = regexp.MustCompile(`^#(\d+) (\S+) (\S+)$`)

// ParseHistory splits history text into its messages. A body line can never look like a
// header (the server refuses such bodies), which is what makes this split exact.
func ParseHistory(text string) ([]Entry, error) {
	var out []Entry
	var cur *Entry
	var body []string
	flush := func() {
		if cur != nil {
			cur.Body = strings.TrimSuffix(strings.Join(body, "\n"), "\n")
			out = append(out, *cur)
		}
	}
	// Every block ends with a blank line; without the text's final newline the last block
	// splits like the others.
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if m := header.FindStringSubmatch(line); m != nil {
			flush()
			var seq int64
			fmt.Sscan(m[1], &seq)
			cur = &Entry{Seq: seq, Seat: m[2], Time: m[3]}
			body = body[:0]
			continue
		}
		if cur == nil {
			if line != "" {
				return nil, fmt.Errorf("history starts with %q, not a header", line)
			}
			continue
		}
		body = append(body, line)
	}
	flush()
	return out, nil
}

// CleanEnv is the environment without any PARLEY_ variable, so that a developer's own
// settings cannot leak into the servers under test.
func CleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PARLEY_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// Buffer collects a process's output while a test reads it; it is safe for concurrent use.
type Buffer = lockedbuf.Buffer

// Tail returns the last lines of s, for logging a failed process's output.
func Tail(s string, lines int) string {
	parts := strings.Split(s, "\n")
	if len(parts) > lines {
		parts = parts[len(parts)-lines:]
	}
	return strings.Join(parts, "\n")
}
