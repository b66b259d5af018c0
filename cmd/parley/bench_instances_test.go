package main

import (
	"compress/gzip"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parleyhq/parley/internal/pgtest"
)

// TestStartInstancesProfile starts two real 'parley serve' processes on PostgreSQL with
// PARLEY_BENCH_SERVE_CPUPROFILE set: once the bench stops them, each has written its CPU
// profile, serve-1.prof and serve-2.prof, as gzip-compressed data. A setting that names no
// directory is refused before anything starts.
func TestStartInstancesProfile(t *testing.T) {
	if got := serveArgs(2, "postgres://x", ""); strings.Contains(strings.Join(got, " "), "cpuprofile") {
		t.Errorf("without a profile directory: %q", got)
	}
	if got := strings.Join(serveArgs(2, "postgres://x", "/d"), " "); !strings.HasSuffix(got, "--cpuprofile /d/serve-2.prof") {
		t.Errorf("with /d: %q", got)
	}
	dir := t.TempDir()
	t.Setenv(profileEnv, filepath.Join(dir, "missing"))
	if _, _, err := startInstances(t.Context(), 2, "postgres://x", "an-admin-token-for-the-test"); err == nil || !strings.Contains(err.Error(), profileEnv) {
		t.Errorf("a missing directory: %v", err)
	}

	dsn := pgtest.DSN(t)
	serveBinary = buildParley(t, t.TempDir())
	t.Cleanup(func() { serveBinary = "" })
	t.Setenv(profileEnv, dir)
	all, stop, err := startInstances(t.Context(), 2, dsn, "an-admin-token-for-the-test")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range all {
		resp, err := http.Get(in.url + "/healthz")
		if err != nil {
			stop()
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	stop()
	for _, name := range []string{"serve-1.prof", "serve-2.prof"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err == nil {
			var raw []byte
			raw, err = io.ReadAll(zr)
			if err == nil && len(raw) == 0 {
				err = io.ErrUnexpectedEOF
			}
		}
		f.Close()
		if err != nil {
			t.Errorf("%s is no profile: %v", name, err)
		}
	}
}
