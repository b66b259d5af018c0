package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/lockedbuf"
	"github.com/parleyhq/parley/internal/mock"
	"github.com/parleyhq/parley/internal/pgtest"
)

func TestParseDB(t *testing.T) {
	tests := []struct {
		in, kind, target string
		bad              bool
	}{
		{"sqlite:parley.db", "sqlite", "parley.db", false},
		{"sqlite:///var/lib/parley.db", "sqlite", "/var/lib/parley.db", false},
		{"data/parley.db", "sqlite", "data/parley.db", false},
		{"postgres://u@h/db", "postgres", "postgres://u@h/db", false},
		{"postgresql://u@h/db?sslmode=disable", "postgres", "postgresql://u@h/db?sslmode=disable", false},
		{"mysql://u@h/db", "", "", true},
		{"sqlite:", "", "", true},
		{"host=127.0.0.1 port=5432 user=postgres dbname=parley", "", "", true},
	}
	for _, tt := range tests {
		kind, target, err := parseDB(tt.in)
		if (err != nil) != tt.bad || kind != tt.kind || target != tt.target {
			t.Errorf("parseDB(%q) = %q, %q, %v", tt.in, kind, target, err)
		}
	}
}

// TestAdminToken checks that a first start creates and prints a token, keeps only its hash
// (0600), and that later starts reuse it without printing anything.
func TestAdminToken(t *testing.T) {
	db := filepath.Join(t.TempDir(), "parley.db")
	var out bytes.Buffer
	e := &env{stdout: &out, stderr: &out, getenv: func(string) string { return "" }}
	first, err := adminToken(e, "sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`export PARLEY_ADMIN_TOKEN=(pk_[A-Za-z0-9_-]{43})\n`).FindStringSubmatch(out.String())
	if m == nil || first.hash == nil || first.token != "" {
		t.Fatalf("first start: %+v\n%s", first, out.String())
	}
	st, err := os.Stat(db + ".admin")
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("hash file: %v, %v", st, err)
	}
	if b, _ := os.ReadFile(db + ".admin"); strings.Contains(string(b), m[1]) {
		t.Fatal("the token itself was stored")
	}

	out.Reset()
	again, err := adminToken(e, "sqlite", db)
	if err != nil || !bytes.Equal(again.hash, first.hash) || out.Len() != 0 {
		t.Fatalf("restart: %+v %v, printed %q", again, err, out.String())
	}

	svc := &mock.RoomService{AuthenticateFn: func(ctx context.Context, token string) (*parley.Caller, error) {
		return nil, parley.Errorf(parley.EUNAUTHORIZED, "unknown token")
	}}
	gate := &adminGate{RoomService: svc, hash: again.hash}
	if c, err := gate.Authenticate(t.Context(), m[1]); err != nil || !c.Admin {
		t.Errorf("the printed token is not the admin's: %v %v", c, err)
	}
	if _, err := gate.Authenticate(t.Context(), m[1]+"x"); parley.ErrorCode(err) != parley.EUNAUTHORIZED {
		t.Errorf("another token: %v", err)
	}

	os.WriteFile(db+".admin", []byte("garbage\n"), 0o600)
	if _, err := adminToken(e, "sqlite", db); err == nil || !strings.Contains(err.Error(), "delete it") {
		t.Errorf("a corrupt hash file: %v", err)
	}

	fromEnv := func(k string) string {
		if k == "PARLEY_ADMIN_TOKEN" {
			return "from-the-environment-123"
		}
		return ""
	}
	if a, err := adminToken(&env{stdout: &out, getenv: fromEnv}, "postgres", "postgres://x"); err != nil || a.token != "from-the-environment-123" {
		t.Errorf("from the environment: %+v %v", a, err)
	}
	if _, err := adminToken(e, "postgres", "postgres://x"); err == nil || !strings.Contains(err.Error(), "PARLEY_ADMIN_TOKEN") {
		t.Errorf("postgres without PARLEY_ADMIN_TOKEN: %v", err)
	}
}

// TestServeCPUProfile runs the server with --cpuprofile until its context ends, as a signal
// ends it: the file then holds a CPU profile (gzip-compressed protobuf, whose string table
// names the sample types "samples" and "cpu"). A path that cannot be created is refused at
// start, before the database is opened.
func TestServeCPUProfile(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "serve.prof")
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	e := &env{stdout: outW, stderr: &stderr, getenv: func(k string) string {
		if k == "PARLEY_ADMIN_TOKEN" {
			return "an-admin-token-for-the-test"
		}
		return ""
	}}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- runServe(ctx, e, []string{"--addr", "127.0.0.1:0", "--db", "sqlite:" + filepath.Join(dir, "p.db"), "--log-level", "error", "--cpuprofile", prof})
		outW.Close()
	}()
	sc := bufio.NewScanner(outR)
	url := ""
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "parley: listening on "); ok {
			url = u
			break
		}
	}
	if url == "" {
		t.Fatalf("the server did not listen: %s", stderr.String())
	}
	go io.Copy(io.Discard, outR)
	for range 50 {
		resp, err := http.Get(url + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	f, err := os.Open(prof)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("the profile is not gzip-compressed: %v", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil || len(raw) == 0 {
		t.Fatalf("the profile: %d bytes, %v", len(raw), err)
	}
	for _, s := range []string{"samples", "cpu", "nanoseconds"} {
		if !bytes.Contains(raw, []byte(s)) {
			t.Errorf("the profile names no %q", s)
		}
	}

	err = runServe(t.Context(), e, []string{"--addr", "127.0.0.1:0", "--db", "sqlite:" + filepath.Join(dir, "q.db"), "--cpuprofile", filepath.Join(dir, "missing", "serve.prof")})
	if err == nil || !strings.Contains(err.Error(), "--cpuprofile") {
		t.Errorf("a profile in a missing directory: %v", err)
	}
	if _, serr := os.Stat(filepath.Join(dir, "q.db")); serr == nil {
		t.Errorf("the database was opened before the profile was refused")
	}
}

// TestServeCommitWait: --commit-wait reaches the store, SQLite or PostgreSQL (the server logs
// the bound its store was opened with), each store's default stands without it, and a value out
// of range is a usage error before anything is opened.
func TestServeCommitWait(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"--commit-wait", "-1ms"}, {"--commit-wait", "11ms"}} {
		args = append([]string{"serve", "--addr", "127.0.0.1:0", "--db", "sqlite:" + filepath.Join(dir, "never.db")}, args...)
		code, _, errOut := runMain(t, args...)
		if code != 2 || !strings.Contains(errOut, "--commit-wait") {
			t.Errorf("%q: exit %d, %q; want a usage error naming --commit-wait", args, code, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "never.db")); err == nil {
		t.Error("a refused --commit-wait opened the database")
	}

	db := "sqlite:" + filepath.Join(dir, "p.db")
	for _, c := range []struct{ flag, want string }{{"", "200µs"}, {"0s", "0s"}, {"3ms", "3ms"}} {
		checkServeCommitWait(t, db, c.flag, c.want)
	}
}

// TestServeCommitWaitPostgres: the same on PostgreSQL, whose default is 6ms.
func TestServeCommitWaitPostgres(t *testing.T) {
	dsn := pgtest.DSN(t)
	for _, c := range []struct{ flag, want string }{{"", "6ms"}, {"1500µs", "1.5ms"}, {"0s", "0s"}} {
		checkServeCommitWait(t, dsn, c.flag, c.want)
	}
}

// checkServeCommitWait starts the server on db with --commit-wait flag (none when empty),
// stops it, and checks that it logged the bound want.
func checkServeCommitWait(t *testing.T, db, flag, want string) {
	t.Helper()
	outR, outW := io.Pipe()
	var stderr lockedbuf.Buffer
	e := &env{stdout: outW, stderr: &stderr, getenv: func(k string) string {
		if k == "PARLEY_ADMIN_TOKEN" {
			return "an-admin-token-for-the-test"
		}
		return ""
	}}
	args := []string{"--addr", "127.0.0.1:0", "--db", db}
	if flag != "" {
		args = append(args, "--commit-wait", flag)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- runServe(ctx, e, args)
		outW.Close()
	}()
	sc := bufio.NewScanner(outR)
	for sc.Scan() && !strings.HasPrefix(sc.Text(), "parley: listening on ") {
	}
	go io.Copy(io.Discard, outR)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve %q: %v", args, err)
	}
	if w := "commit_wait=" + want; !strings.Contains(stderr.String(), w) {
		t.Errorf("serve %q: the log does not show %s:\n%s", args, w, stderr.String())
	}
}
