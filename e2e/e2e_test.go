// The end-to-end tests drive the real parley binary: it builds it, runs `parley serve` on
// 127.0.0.1:0 against real SQLite and PostgreSQL databases, and talks to it over HTTP and
// through the CLI client, as a user would.
package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parleyhq/parley/client"
	"github.com/parleyhq/parley/internal/pgtest"
	"github.com/parleyhq/parley/internal/servertest"
)

// bin is the parley binary under test, built once for the whole run by parley(t).
var bin string

func TestMain(m *testing.M) { servertest.Main(m) }

// parley builds the binary under test, once, and skips in -short mode: building it and
// running servers takes seconds.
func parley(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test: skipped in -short mode")
	}
	bin = servertest.Binary(t)
	return bin
}

// server is one running `parley serve` process.
type server struct {
	name       string
	url        string
	adminToken string // printed by a first start without PARLEY_ADMIN_TOKEN
	cmd        *exec.Cmd
	stdout     *servertest.Buffer
	stderr     *servertest.Buffer
	done       chan error // receives the process's exit
	exited     bool       // set once done has been received from
}

var listening = regexp.MustCompile(`^parley: listening on (https?://127\.0\.0\.1:\d+)$`)
var adminExport = regexp.MustCompile(`export PARLEY_ADMIN_TOKEN=(\S+)`)

// startServer runs `parley serve --addr 127.0.0.1:0 args…` and waits until it says where it
// listens. The process is stopped (SIGTERM, as a user's Ctrl-C) when the test ends.
func startServer(t *testing.T, name string, env []string, args ...string) *server {
	t.Helper()
	parley(t)
	s := &server{name: name, stdout: &servertest.Buffer{}, stderr: &servertest.Buffer{}, done: make(chan error, 1)}
	s.cmd = exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--log-level", "debug"}, args...)...)
	s.cmd.Env = servertest.CleanEnv(env...)
	s.cmd.Stderr = s.stderr
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			s.stdout.Write([]byte(line + "\n"))
			if m := adminExport.FindStringSubmatch(line); m != nil {
				s.adminToken = m[1]
			}
			if m := listening.FindStringSubmatch(line); m != nil {
				ready <- m[1]
			}
		}
	}()
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(func() {
		s.stop(t)
		if t.Failed() {
			t.Logf("%s stdout:\n%s\n%s stderr (tail):\n%s", name, s.stdout, name, servertest.Tail(s.stderr.String(), 60))
		}
	})
	select {
	case s.url = <-ready:
	case err := <-s.done:
		s.exited = true
		t.Fatalf("%s exited before listening: %v\nstdout:\n%s\nstderr:\n%s", name, err, s.stdout, s.stderr)
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not say where it listens within 60s\nstdout:\n%s\nstderr:\n%s", name, s.stdout, s.stderr)
	}
	return s
}

// stop ends the server as Ctrl-C would and checks that it shuts down cleanly and quickly,
// open event streams included.
func (s *server) stop(t *testing.T) {
	if s.exited {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		s.exited = true
		if err != nil {
			t.Errorf("%s: exit after SIGTERM: %v", s.name, err)
		}
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
		s.exited = true
		t.Errorf("%s did not stop within 15s of SIGTERM", s.name)
	}
}

// kill ends the server at once, as a crash or an OOM kill would: no shutdown at all.
func (s *server) kill() {
	if s.exited {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.exited = true
}

// response is an HTTP answer, read whole.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("answer is not JSON (%v): %s", err, r.body)
	}
}

// errorCode returns the "code" of a JSON error answer.
func (r response) errorCode(t *testing.T) string {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string }
	}
	r.json(t, &e)
	if e.Error.Message == "" {
		t.Errorf("error answer without a message: %s", r.body)
	}
	return e.Error.Code
}

// call sends one request as it is and returns the answer whatever its status: these tests
// check the HTTP contract itself (statuses, headers, bytes). What only needs the API done
// goes through client.
func (s *server) call(t *testing.T, method, path, token string, body string, header ...string) response {
	t.Helper()
	var b []byte
	if body != "" {
		b = []byte(body)
	}
	r, err := servertest.Do(t.Context(), http.DefaultClient, method, s.url+path, token, b, header...)
	if err != nil {
		t.Fatalf("%s %s on %s: %v", method, path, s.name, err)
	}
	return response{r.Status, r.Header, r.Body}
}

// client returns a typed client of s with the given token.
func (s *server) client(t *testing.T, token string) *client.Client {
	t.Helper()
	c, err := client.New(s.url, token)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// cli runs the parley client against s with the given token and returns its stdout, stderr
// and exit code.
func (s *server) cli(t *testing.T, token, stdin string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = servertest.CleanEnv("PARLEY_URL="+s.url, "PARLEY_TOKEN="+token)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("parley %v: %v", args, err)
	}
	return out.String(), errOut.String(), code
}

// fixture reads a study message copied into testdata (see testdata/study/SOURCE.md), with
// its ask times moved from 2026 to 2099 so that they are still to come when the test runs.
func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "study", name))
	if err != nil {
		t.Fatal(err)
	}
	return regexp.MustCompile(`\b2026(\d{4}T\d{4}Z)`).ReplaceAllString(string(b), "2099$1")
}

// gitRepo makes a repository with one commit on branch feat/rate-limit and returns its path
// and the commit's sha.
func gitRepo(t *testing.T) (dir, sha string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv(pgtest.EnvRequireAll) == "1" {
			t.Fatal("git is not installed, and " + pgtest.EnvRequireAll + "=1 requires every suite")
		}
		t.Skip("git is not installed: apt-get install -y git")
	}
	dir = t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(servertest.CleanEnv(), "GIT_AUTHOR_NAME=builder", "GIT_AUTHOR_EMAIL=builder@example.com",
			"GIT_COMMITTER_NAME=builder", "GIT_COMMITTER_EMAIL=builder@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(dir, "README"), []byte("app\n"), 0o644)
	git("add", "README")
	git("commit", "-q", "-m", "init")
	git("checkout", "-q", "-b", "feat/rate-limit")
	os.MkdirAll(filepath.Join(dir, "lib"), 0o755)
	os.WriteFile(filepath.Join(dir, "lib", "rate-limit.ts"), []byte("export const limit = 60;\n"), 0o644)
	git("add", "lib/rate-limit.ts")
	git("commit", "-q", "-m", "limiter: sliding window")
	return dir, git("rev-parse", "HEAD")
}
