package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parleyhq/parley/convention"
	"github.com/parleyhq/parley/internal/sharedtest"
)

// studyPath returns the path of a study fixture in the shared folder beside the clone,
// skipping the test when it is absent.
func studyPath(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join("..", "..", "..", "shared", "study", name)
	if _, err := os.Stat(p); err != nil {
		sharedtest.Absent(t, "the study fixtures are not at %s (the shared folder sits beside the clone): %v", p, err)
	}
	return p
}

func TestLintAsPublished(t *testing.T) {
	p := studyPath(t, "p2/as-published.txt")
	code, out, errs := runParley(t, "", "lint", p)
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout %s\nstderr %s", code, out, errs)
	}
	want := p + ":1:27: error: n=10 but the message has 9 fact lines"
	if !strings.HasPrefix(out, want) {
		t.Errorf("stdout does not start with %q:\n%s", want, out)
	}
	if !strings.Contains(out, "[n-mismatch]\n    fix: if no line was lost, v1 report limiter to lead n=9") {
		t.Errorf("no indented fix line:\n%s", out)
	}
}

func TestLintStudyFixturesClean(t *testing.T) {
	var files []string
	for _, p := range []string{"p1", "p2", "p3"} {
		files = append(files, studyPath(t, p+"/convention.txt"), studyPath(t, p+"/aacp.txt"))
	}
	code, out, errs := runParley(t, "", append([]string{"lint", "--roster", "lead,builder,yu"}, files...)...)
	if code != 0 || out != "" || errs != "" {
		t.Fatalf("exit %d, want 0 and no output\nstdout %s\nstderr %s", code, out, errs)
	}
}

func TestLintJSON(t *testing.T) {
	conv := writeTemp(t, "c.txt", "v1 report limiter to lead,mara n=1\ndone limiter built\n")
	packet := writeTemp(t, "a.txt", "REPORT|IT|return:builder|p:1|aacp:1.1|res:rate_limit\n")
	prose := writeTemp(t, "p.txt", "Hi lead, the limiter is done and the tests pass.\n")
	js := writeTemp(t, "m.json", `{"to": "lead", "deadline": "2026-09-19T12:00:00Z", "budget": 150000}`)
	code, out, errs := runParley(t, "", "lint", "--json", "--roster", "lead,builder", conv, packet, prose, js)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (unknown seat, packet without to:)\nstderr %s", code, errs)
	}
	var got []struct {
		File        string                  `json:"file"`
		Format      string                  `json:"format"`
		Diagnostics []convention.Diagnostic `json:"diagnostics"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	want := []struct {
		file, format string
		codes        []string
	}{
		{conv, "convention", []string{"unknown-seat", "done-without-ev"}},
		{packet, "aacp", []string{"no-to"}},
		{prose, "text", []string{"format"}},
		{js, "json", []string{"format"}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d results, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.File != w.file || g.Format != w.format {
			t.Errorf("result %d: file %q format %q, want %q %q", i, g.File, g.Format, w.file, w.format)
		}
		var codes []string
		for _, d := range g.Diagnostics {
			codes = append(codes, d.Code)
		}
		if strings.Join(codes, ",") != strings.Join(w.codes, ",") {
			t.Errorf("%s: codes %v, want %v", w.format, codes, w.codes)
		}
	}
	// The text and JSON warnings name the convention and put a number on the saving.
	for _, i := range []int{2, 3} {
		m := got[i].Diagnostics[0].Message
		if !strings.Contains(m, "tokens") || !strings.Contains(m, "about") || !strings.Contains(got[i].Diagnostics[0].Fix, "v1 <intent>") {
			t.Errorf("%s warning does not say what the convention would cost: %s", got[i].Format, m)
		}
	}
	// A clean input still gets an empty array, not null.
	clean := writeTemp(t, "ok.txt", "v1 note limiter to all n=1\noutcome partial\n")
	code, out, _ = runParley(t, "", "lint", "--json", clean)
	if code != 0 || !strings.Contains(out, `"diagnostics": []`) {
		t.Errorf("exit %d, output %s", code, out)
	}
}

// --json writes every diagnostic's fields in the same order, "fix" included when it is empty
// (the HTTP API leaves an empty fix out; the CLI has always written it).
func TestLintJSONEmptyFix(t *testing.T) {
	f := writeTemp(t, "e.txt", "v1 report limiter to lead n=1\noutcome partial \U0001F680\U0001F680\n")
	code, out, errs := runParley(t, "", "lint", "--json", f)
	if code != 0 {
		t.Fatalf("exit %d, want 0\nstderr %s", code, errs)
	}
	want := `      {
        "line": 2,
        "col": 17,
        "severity": "warning",
        "code": "emoji",
        "message": "` + "`\U0001F680\U0001F680`" + ` costs 4 tokens and says nothing a word does not (done, claim, block…)",
        "fix": ""
      }`
	if !strings.Contains(out, want) {
		t.Errorf("--json output:\n%s\nwant it to hold\n%s", out, want)
	}
}

func TestLintStdinAndExitCodes(t *testing.T) {
	tests := []struct {
		name, stdin string
		args        []string
		code        int
		out         string
	}{
		{"warning only exits 0", "v1 report limiter to lead n=1\ndone limiter built\n", []string{"lint"}, 0,
			"<stdin>:2:1: warning: done has no ev under it"},
		{"dash is stdin", "v1 report limiter to lead n=2\ndone limiter built\n", []string{"lint", "-"}, 1,
			"<stdin>:1:27: error: n=2 but the message has 1 fact line:"},
		{"empty input is an error", "", []string{"lint"}, 1, "<stdin>:1:1: error: the message is empty [empty]"},
		{"a header below a greeting is still a convention message", "Status below.\nv1 report limiter to lead n=1\noutcome partial\n", []string{"lint"}, 1,
			"<stdin>:1:1: error: the header must be the first line: line 2 looks like it"},
		{"decision taken, with a two-line fix", "v1 propose limiter to yu n=2\nopt/A Redis\nyu decides by 20260918T0900Z\n", []string{"lint"}, 0,
			"    fix: decider yu\n         ask <what to decide>, 20260918T0900Z\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runParley(t, tt.stdin, tt.args...)
			if code != tt.code || !strings.Contains(out, tt.out) {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nwant it to contain:\n%s\nstderr: %s", code, tt.code, out, tt.out, errs)
			}
		})
	}
}

func TestLintUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"lint", "--nope"},
		{"lint", "--roster", "a,,b", "x.txt"},
		{"lint", filepath.Join(t.TempDir(), "missing.txt")},
	} {
		if code, _, errs := runParley(t, "", args...); code != 2 || errs == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message", args, code, errs)
		}
	}
	// An unreadable file does not stop the others from being checked.
	bad := writeTemp(t, "bad.txt", "v1 report limiter to lead n=3\noutcome partial\n")
	code, out, errs := runParley(t, "", "lint", filepath.Join(t.TempDir(), "missing.txt"), bad)
	if code != 2 || !strings.Contains(out, bad+":1:27: error: n=3") || !strings.Contains(errs, "missing.txt") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	code, out, _ = runParley(t, "", "lint", "--help")
	if code != 0 || !strings.Contains(out, "Usage: parley lint") || !strings.Contains(out, "Examples:") {
		t.Errorf("--help: exit %d\n%s", code, out)
	}
}

func TestConventionCommand(t *testing.T) {
	code, out, _ := runParley(t, "", "convention")
	if code != 0 || out != convention.Text+"\n" {
		t.Errorf("exit %d, output %q", code, out)
	}
	code, out, _ = runParley(t, "", "convention", "--tokens")
	if code != 0 || strings.TrimSpace(out) != itoaTest(conventionCounter().Count(convention.Text)) {
		t.Errorf("--tokens: exit %d, output %q", code, out)
	}
	if code, _, _ := runParley(t, "", "convention", "extra"); code != 2 {
		t.Errorf("an argument: exit %d, want 2", code)
	}
}

func itoaTest(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
