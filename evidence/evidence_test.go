package evidence_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/evidence"
)

// MustRepo creates a git repository with one commit on main and a second on branch feat, and
// returns its path and the two shas.
func MustRepo(tb testing.TB) (dir, mainSHA, featSHA string) {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("git is not installed")
	}
	dir = tb.TempDir()
	run := func(args ...string) string {
		tb.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			tb.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	run("add", "a.txt")
	run("commit", "-q", "-m", "a")
	mainSHA = run("rev-parse", "HEAD")
	run("checkout", "-q", "-b", "feat/rate-limit")
	if err := os.WriteFile(filepath.Join(dir, "b.txt"), []byte("b\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	run("add", "b.txt")
	run("commit", "-q", "-m", "b")
	featSHA = run("rev-parse", "HEAD")
	run("checkout", "-q", "main")
	return dir, mainSHA, featSHA
}

func TestParse(t *testing.T) {
	tests := []struct {
		text string
		want evidence.Ref
	}{
		{"commit 3f9a2c1 on branch feat/rate-limit", evidence.Ref{Kind: "commit", ID: "3f9a2c1", Branch: "feat/rate-limit"}},
		{"commit 3F9A2C1 on main", evidence.Ref{Kind: "commit", ID: "3f9a2c1", Branch: "main"}},
		{"commit 3f9a2c1, pushed", evidence.Ref{Kind: "commit", ID: "3f9a2c1"}},
		{"run ci-1287", evidence.Ref{Kind: "run", ID: "ci-1287"}},
		{"screenshot in slack", evidence.Ref{ID: "screenshot in slack"}},
		{"commit", evidence.Ref{ID: "commit"}},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			if got := evidence.Parse(tt.text); got != tt.want {
				t.Errorf("Parse(%q) = %+v, want %+v", tt.text, got, tt.want)
			}
		})
	}
}

func TestValidSHAAndBranch(t *testing.T) {
	for _, s := range []string{"3f9a2c1", strings.Repeat("a", 40), strings.Repeat("0", 64)} {
		if !evidence.ValidSHA(s) {
			t.Errorf("ValidSHA(%q) = false", s)
		}
	}
	for _, s := range []string{"", "3f9", "3f9a", "3f9a2c", "3F9A2C1", "xyz1234", "3f9a2c1;rm", "--all", strings.Repeat("a", 65)} {
		if evidence.ValidSHA(s) {
			t.Errorf("ValidSHA(%q) = true", s)
		}
	}
	for _, b := range []string{"main", "feat/rate-limit", "release-1.2", "origin/main", "_x"} {
		if !evidence.ValidBranch(b) {
			t.Errorf("ValidBranch(%q) = false", b)
		}
	}
	for _, b := range []string{"", "-x", "--upload-pack=evil", "a..b", "main@{1}", "a//b", "a/", "x.lock", "a b", "a;b", "$(id)"} {
		if evidence.ValidBranch(b) {
			t.Errorf("ValidBranch(%q) = true", b)
		}
	}
}

func TestCommit(t *testing.T) {
	dir, mainSHA, featSHA := MustRepo(t)
	r := &evidence.Resolver{GitRepo: dir}
	ctx := t.Context()
	tests := []struct {
		name, sha, branch string
		status, detail    string
	}{
		{"full sha", mainSHA, "", evidence.Verified, "commit " + mainSHA},
		{"short sha on its branch", featSHA[:7], "feat/rate-limit", evidence.Verified, "commit " + featSHA[:7] + " on feat/rate-limit"},
		{"main commit is on feat too", mainSHA[:7], "feat/rate-limit", evidence.Verified, ""},
		{"feat commit is not on main", featSHA[:7], "main", evidence.Unverified, "commit " + featSHA[:7] + " is not on main"},
		{"unknown branch", mainSHA[:7], "nope", evidence.Unverified, "branch nope not found in the repository"},
		{"unknown sha", "3f9a2c1", "", evidence.Unverified, "commit 3f9a2c1 not found in the repository"},
		{"not hex", "zz9a2c1", "", evidence.Unverified, `commit "zz9a2c1" is not a hex sha (7 to 64 digits 0-9a-f)`},
		// Four to six digits name a commit in almost any repository of some size: not proof.
		{"four digits", mainSHA[:4], "", evidence.Unverified, "commit " + mainSHA[:4] + " is too short to check: give at least 7 hex digits of the sha"},
		{"six digits on a branch", mainSHA[:6], "main", evidence.Unverified, "commit " + mainSHA[:6] + " is too short to check: give at least 7 hex digits of the sha"},
		{"unsafe branch", mainSHA[:7], "--output=/tmp/x", evidence.Unverified, `branch "--output=/tmp/x" is not a plain branch name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := r.Commit(ctx, tt.sha, tt.branch)
			if v.Status != tt.status || (tt.detail != "" && v.Detail != tt.detail) {
				t.Errorf("Commit(%q, %q) = %q, want %s: %s", tt.sha, tt.branch, v, tt.status, tt.detail)
			}
		})
	}

	// A tree or blob is not a commit.
	tree := strings.TrimSpace(mustGit(t, dir, "rev-parse", "HEAD^{tree}"))
	if v := r.Commit(ctx, tree, ""); v.Status != evidence.Unverified {
		t.Errorf("a tree sha verified as a commit: %s", v)
	}
}

func mustGit(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		tb.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

func TestCommitWithoutRepo(t *testing.T) {
	v := (&evidence.Resolver{}).Commit(t.Context(), "3f9a2c1", "")
	if v.String() != "unverified: commit 3f9a2c1 not checked: the server has no repository configured" {
		t.Errorf("got %q", v)
	}
}

func TestCommitTimeout(t *testing.T) {
	// A git that never answers: the resolver must give up after its timeout, not hang the post.
	bin := filepath.Join(t.TempDir(), "git")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nexec sleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := &evidence.Resolver{GitRepo: t.TempDir(), Git: bin, Timeout: 50 * time.Millisecond}
	start := time.Now()
	v := r.Commit(t.Context(), "3f9a2c1", "")
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Commit took %s with a 50ms timeout", took)
	}
	if v.Status != evidence.Unverified || !strings.Contains(v.Detail, "longer than 50ms") {
		t.Errorf("got %q, want unverified: … longer than 50ms", v)
	}
}

// TestResolveBeforeDeadline: the shared deadline of a post's checks cuts a commit's git off
// when it comes before the resolver's own timeout.
func TestResolveBeforeDeadline(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "git")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nexec sleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := &evidence.Resolver{GitRepo: t.TempDir(), Git: bin, Timeout: time.Minute}
	start := time.Now()
	v := r.ResolveBefore(t.Context(), start.Add(100*time.Millisecond), "demo", "commit 3f9a2c1")
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("ResolveBefore took %s with a deadline 100ms away", took)
	}
	if v.Status != evidence.Unverified || !strings.Contains(v.Detail, "not checked: git took longer") {
		t.Errorf("got %q, want unverified: … not checked: git took longer …", v)
	}
}

func TestCommitGitMissing(t *testing.T) {
	r := &evidence.Resolver{GitRepo: t.TempDir(), Git: filepath.Join(t.TempDir(), "no-git")}
	v := r.Commit(t.Context(), "3f9a2c1", "")
	if v.String() != "unverified: commit 3f9a2c1 not checked: git failed on the server" {
		t.Errorf("got %q", v)
	}
}

type runs map[string]*parley.Run

func (m runs) Run(_ context.Context, room, id string) (*parley.Run, error) {
	if r, ok := m[room+"/"+id]; ok {
		return r, nil
	}
	return nil, parley.Errorf(parley.ENOTFOUND, "no run %s", id)
}

func TestRun(t *testing.T) {
	r := &evidence.Resolver{Runs: runs{
		"demo/ci-1": {ID: "ci-1", Passed: 12},
		"demo/ci-2": {ID: "ci-2", Passed: 10, Failed: 2},
		"demo/ci-3": {ID: "ci-3"},
	}}
	tests := map[string]string{
		"run ci-1":         "verified: run ci-1, 12 passed",
		"run ci-2":         "failed: run ci-2 has 2 failures",
		"run ci-3":         "unverified: run ci-3 ran no tests",
		"run ci-9":         "unverified: run ci-9 not found; a runner seat must post it first",
		"run -rf":          `unverified: run id "-rf" is not a plain id`,
		"see the PR":       `unverified: "see the PR" is neither ` + "`commit <sha>` nor `run <id>`",
		"commit 3f9a2c1 x": "unverified: commit 3f9a2c1 not checked: the server has no repository configured",
	}
	for text, want := range tests {
		if got := r.Resolve(t.Context(), "demo", text).String(); got != want {
			t.Errorf("Resolve(%q) = %q, want %q", text, got, want)
		}
	}
	// Another room's run is not evidence here.
	if v := r.Resolve(t.Context(), "other", "run ci-1"); v.OK() {
		t.Errorf("a run of room demo verified in room other")
	}
}

func TestAboutTests(t *testing.T) {
	for text, want := range map[string]bool{
		"unit test passing, 12 cases":      true,
		"tests for the limiter":            true,
		"suite green":                      true,
		"limiter lib/rate-limit.ts window": false,
		"contest entry":                    false,
		"latest build":                     false,
	} {
		if got := evidence.AboutTests(text); got != want {
			t.Errorf("AboutTests(%q) = %v, want %v", text, got, want)
		}
	}
}

func TestParseRun(t *testing.T) {
	goTest := `{"Action":"run","Package":"x","Test":"TestA"}
{"Action":"pass","Package":"x","Test":"TestA","Elapsed":0}
{"Action":"run","Package":"x","Test":"TestB"}
{"Action":"run","Package":"x","Test":"TestB/sub"}
{"Action":"fail","Package":"x","Test":"TestB/sub","Elapsed":0}
{"Action":"fail","Package":"x","Test":"TestB","Elapsed":0}
{"Action":"fail","Package":"x","Elapsed":0.1}
`
	junit := `<?xml version="1.0"?>
<testsuites><testsuite name="a" tests="5" failures="1" errors="1" skipped="1"></testsuite>
<testsuite name="b" tests="3" failures="0" errors="0"></testsuite></testsuites>`
	tests := []struct {
		name, ct, body, id string
		want               parley.Run
		code               string
	}{
		{"json", "application/json", `{"id":"ci-1","commit":"3F9A2C1","passed":12,"failed":0}`, "", parley.Run{ID: "ci-1", Commit: "3f9a2c1", Passed: 12}, ""},
		{"json id from argument", "", `{"passed":3,"failed":1}`, "ci-2", parley.Run{ID: "ci-2", Passed: 3, Failed: 1}, ""},
		{"json ids disagree", "", `{"id":"a","passed":3,"failed":1}`, "b", parley.Run{}, parley.EINVALID},
		{"json no id", "", `{"passed":3,"failed":1}`, "", parley.Run{}, parley.EINVALID},
		{"json missing counts", "", `{"id":"a","passed":3}`, "", parley.Run{}, parley.EINVALID},
		{"json unknown field", "", `{"id":"a","passed":3,"failed":0,"extra":1}`, "", parley.Run{}, parley.EINVALID},
		{"json bad commit", "", `{"id":"a","commit":"HEAD","passed":3,"failed":0}`, "", parley.Run{}, parley.EINVALID},
		{"go test -json", "", goTest, "gt-1", parley.Run{ID: "gt-1", Passed: 1, Failed: 2}, ""},
		{"junit", "application/xml", junit, "ju-1", parley.Run{ID: "ju-1", Passed: 5, Failed: 2}, ""},
		{"junit single suite", "", `<testsuite tests="4" failures="0" errors="0"/>`, "ju-2", parley.Run{ID: "ju-2", Passed: 4}, ""},
		{"junit wrong root", "", `<html></html>`, "x", parley.Run{}, parley.EINVALID},
		{"empty", "", "  ", "x", parley.Run{}, parley.EINVALID},
		{"bad id", "", `{"id":"../etc","passed":1,"failed":0}`, "", parley.Run{}, parley.EINVALID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := evidence.ParseRun(tt.ct, []byte(tt.body), tt.id)
			if code := parley.ErrorCode(err); code != tt.code {
				t.Fatalf("code %q (%v), want %q", code, err, tt.code)
			}
			if err == nil && *got != tt.want {
				t.Errorf("got %+v, want %+v", *got, tt.want)
			}
		})
	}
}
