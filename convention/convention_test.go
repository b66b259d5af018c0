package convention

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/internal/sharedtest"
)

const studyDir = "../../shared/study"

// studyFile reads a fixture of the format study, skipping the test when the shared folder is
// not beside the repository (it is not part of the module).
func studyFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(studyDir, name))
	if os.IsNotExist(err) {
		sharedtest.Absent(t, "the study fixtures are not at %s (the shared folder sits beside the repository); skipping", studyDir)
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func codes(diags []Diagnostic) []string {
	out := []string{}
	for _, d := range diags {
		out = append(out, d.Code)
	}
	return out
}

func TestStudyConventionFixturesAreClean(t *testing.T) {
	for _, p := range []string{"p1", "p2", "p3"} {
		t.Run(p, func(t *testing.T) {
			src := studyFile(t, p+"/convention.txt")
			m, diags := Check(src, Options{Counter: o200k, Roster: []string{"lead", "builder", "yu"}})
			for _, d := range diags {
				t.Errorf("%s/convention.txt:%s\n    fix: %s", p, d, d.Fix)
			}
			if got := Render(m); got != src {
				t.Errorf("Render changed a canonical message:\n%s\nwant:\n%s", got, src)
			}
		})
	}
}

func TestStudyAsPublishedHasWrongN(t *testing.T) {
	src := studyFile(t, "p2/as-published.txt")
	_, diags := Check(src, Options{Counter: o200k})
	if len(diags) != 1 {
		t.Fatalf("want exactly one diagnostic, got %v", diags)
	}
	d := diags[0]
	if d.Severity != SeverityError || d.Code != "n-mismatch" || d.Line != 1 || d.Col != 27 {
		t.Errorf("got %s", d)
	}
	for _, want := range []string{"n=10", "9 fact lines"} {
		if !strings.Contains(d.Message, want) {
			t.Errorf("message %q does not name %q", d.Message, want)
		}
	}
	if !strings.Contains(d.Fix, "v1 report limiter to lead n=9") {
		t.Errorf("fix %q does not show the corrected header", d.Fix)
	}
}

func TestParseHeader(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		want  Header
		codes []string // from Parse alone
	}{
		{"canonical", "v1 report limiter to lead n=0\n", Header{"v1", "report", "limiter", []string{"lead"}, 0, 0}, nil},
		{"several seats and re", "v1 answer limiter to lead,yu re 12 n=0", Header{"v1", "answer", "limiter", []string{"lead", "yu"}, 12, 0}, nil},
		{"all", "v1 note limiter to all n=0", Header{"v1", "note", "limiter", []string{"all"}, 0, 0}, nil},
		{"space after comma", "v1 note limiter to lead, yu n=0", Header{"v1", "note", "limiter", []string{"lead", "yu"}, 0, 0}, nil},
		{"n before re", "v1 answer limiter to lead n=0 re 3", Header{"v1", "answer", "limiter", []string{"lead"}, 3, 0}, nil},
		{"no n", "v1 report limiter to lead", Header{"v1", "report", "limiter", []string{"lead"}, 0, -1}, nil},
		{"no to", "v1 report limiter n=0", Header{"v1", "report", "limiter", nil, 0, 0}, nil},
		{"stray addressee", "v1 report limiter lead n=0", Header{"v1", "report", "limiter", nil, 0, 0}, nil},
		{"unknown version parses", "v2 report limiter to lead n=0", Header{"v2", "report", "limiter", []string{"lead"}, 0, 0}, nil},
		{"upper-case version", "V1 report limiter to lead n=0", Header{"v1", "report", "limiter", []string{"lead"}, 0, 0}, []string{"header"}},
		{"not a header", "hello there", Header{N: -1}, []string{"header"}},
		{"seats without commas", "v1 report limiter to lead yu n=0", Header{"v1", "report", "limiter", nil, 0, 0}, []string{"header"}},
		{"at-sign seat", "v1 report limiter to @lead n=0", Header{"v1", "report", "limiter", nil, 0, 0}, []string{"header"}},
		{"n with spaces", "v1 report limiter to lead n = 0", Header{"v1", "report", "limiter", []string{"lead"}, 0, -1}, []string{"header"}},
		{"n not a number", "v1 report limiter to lead n=x", Header{"v1", "report", "limiter", []string{"lead"}, 0, -1}, []string{"header"}},
		{"re not a number", "v1 report limiter to lead re x n=0", Header{"v1", "report", "limiter", []string{"lead"}, 0, 0}, []string{"header"}},
		{"re with hash", "v1 report limiter to lead re #4 n=0", Header{"v1", "report", "limiter", []string{"lead"}, 4, 0}, nil},
		{"to with colon", "v1 report limiter to: lead n=0", Header{"v1", "report", "limiter", []string{"lead"}, 0, 0}, []string{"header"}},
		{"no topic", "v1 report to lead n=0", Header{"v1", "report", "", []string{"lead"}, 0, 0}, []string{"header"}},
		{"trailing junk", "v1 report limiter to lead n=0 please", Header{"v1", "report", "limiter", []string{"lead"}, 0, 0}, []string{"header"}},
		{"empty", "", Header{N: -1}, []string{"empty"}},
		{"blank lines only", "\n \n", Header{N: -1}, []string{"empty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, diags := Parse(tt.src)
			if !reflect.DeepEqual(m.Header, tt.want) {
				t.Errorf("header = %+v, want %+v", m.Header, tt.want)
			}
			if got := codes(diags); !slices.Equal(got, append([]string{}, tt.codes...)) {
				t.Errorf("codes = %v, want %v (%v)", got, tt.codes, diags)
			}
		})
	}
}

func TestHeaderNotFirst(t *testing.T) {
	src := "Here is my report:\n```\nv1 report limiter to lead n=1\noutcome partial\n```\n"
	if Looks(src) || HeaderLine(src) != 3 {
		t.Fatalf("Looks = %v, HeaderLine = %d", Looks(src), HeaderLine(src))
	}
	_, diags := Parse(src)
	if len(diags) != 1 || !strings.Contains(diags[0].Message, "line 3 looks like it") {
		t.Errorf("got %v", diags)
	}
}

func TestParseLines(t *testing.T) {
	src := "v1 report limiter to lead n=5\r\n" +
		"done#1 limiter built\n" +
		"  ev#1   commit 3f9a2c1 on feat/x  \n" +
		"\n" +
		"opt/A Redis\n" +
		"outcome partial\n" +
		"lib/x.ts changed\n"
	m, diags := Parse(src)
	if len(diags) != 0 {
		t.Fatalf("diags: %v", diags)
	}
	want := []Line{
		{Num: 2, Word: "done", Key: "1", Mark: "#", Text: "limiter built", Raw: "done#1 limiter built", Reserved: true},
		{Num: 3, Word: "ev", Key: "1", Mark: "#", Text: "commit 3f9a2c1 on feat/x", Raw: "  ev#1   commit 3f9a2c1 on feat/x  ", Reserved: true},
		{Num: 5, Word: "opt", Key: "A", Mark: "/", Text: "Redis", Raw: "opt/A Redis", Reserved: true},
		{Num: 6, Word: "outcome", Text: "partial", Raw: "outcome partial"},
		{Num: 7, Word: "lib/x.ts", Text: "changed", Raw: "lib/x.ts changed"},
	}
	if len(m.Lines) != len(want) {
		t.Fatalf("got %d lines, want %d", len(m.Lines), len(want))
	}
	for i, w := range want {
		g := m.Lines[i]
		g.col, g.textCol = 0, 0
		if !reflect.DeepEqual(g, w) {
			t.Errorf("line %d = %+v\nwant %+v", i, g, w)
		}
	}
	if c := m.Lines[1].Col(); c != 3 {
		t.Errorf("ev col = %d, want 3", c)
	}
	if c := m.Lines[1].TextCol(); c != 10 {
		t.Errorf("ev text col = %d, want 10", c)
	}
	wantRender := "v1 report limiter to lead n=5\ndone#1 limiter built\nev#1 commit 3f9a2c1 on feat/x\nopt/A Redis\noutcome partial\nlib/x.ts changed\n"
	if got := Render(m); got != wantRender {
		t.Errorf("Render =\n%s\nwant\n%s", got, wantRender)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		roster []string
		codes  []string
	}{
		{"clean", "v1 report limiter to lead n=1\noutcome partial\n", nil, nil},
		{"n too high", "v1 report limiter to lead n=3\noutcome partial\n", nil, []string{"n-mismatch"}},
		{"n too low", "v1 report limiter to lead n=0\noutcome partial\n", nil, []string{"n-mismatch"}},
		{"no n", "v1 report limiter to lead\noutcome partial\n", nil, []string{"no-n"}},
		{"no to", "v1 report limiter n=1\noutcome partial\n", nil, []string{"no-to"}},
		{"unknown version", "v3 report limiter to lead n=1\noutcome partial\n", nil, []string{"version"}},
		{"ev without done", "v1 report limiter to lead n=1\nev#2 commit 3f9a2c1\n", nil, []string{"ev-without-done"}},
		{"unkeyed ev without done", "v1 report limiter to lead n=2\nclaim tests pass\nev run 812\n", nil, []string{"ev-without-done"}},
		{"ev pairs", "v1 report limiter to lead n=2\ndone#2 built\nev#2 commit 3f9a2c1\n", nil, nil},
		{"roster ok", "v1 report limiter to lead,all n=1\noutcome partial\n", []string{"lead", "yu"}, nil},
		{"not in roster", "v1 report limiter to lead,mara n=1\noutcome partial\n", []string{"lead", "yu"}, []string{"unknown-seat"}},
		{"roster nil checks nothing", "v1 report limiter to anyone n=1\noutcome partial\n", nil, nil},
		{"empty roster rejects everyone", "v1 report limiter to lead n=1\noutcome partial\n", []string{}, []string{"unknown-seat"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, pd := Parse(tt.src)
			if len(pd) != 0 {
				t.Fatalf("parse: %v", pd)
			}
			diags := Validate(m, Options{Counter: o200k, Roster: tt.roster})
			for _, d := range diags {
				if d.Severity != SeverityError {
					t.Errorf("Validate returned a %s: %s", d.Severity, d)
				}
			}
			if got := codes(diags); !slices.Equal(got, append([]string{}, tt.codes...)) {
				t.Errorf("codes = %v, want %v (%v)", got, tt.codes, diags)
			}
		})
	}
}

func TestValidatePositionsAndFixes(t *testing.T) {
	_, diags := Check("v1 report limiter lead n=1\noutcome partial\n", Options{Counter: o200k})
	if len(diags) != 1 || diags[0].Code != "no-to" || diags[0].Col != 19 || diags[0].Fix != "v1 report limiter to lead n=1" {
		t.Errorf("got %v", diags)
	}
	_, diags = Check("v1 report limiter to lead,mra n=1\noutcome partial\n", Options{Counter: o200k, Roster: []string{"lead", "mara"}})
	if len(diags) != 1 || diags[0].Col != 27 || diags[0].Fix != "mara" || !strings.Contains(diags[0].Message, "lead, mara") {
		t.Errorf("got %v", diags)
	}
	_, diags = Check("v1 report limiter to lead\noutcome partial\n", Options{Counter: o200k})
	if len(diags) != 1 || diags[0].Fix != "v1 report limiter to lead n=1" {
		t.Errorf("got %v", diags)
	}
}

func TestParseTime(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"20260918T0900Z", time.Date(2026, 9, 18, 9, 0, 0, 0, time.UTC), true},
		{"20260919T120005Z", time.Date(2026, 9, 19, 12, 0, 5, 0, time.UTC), true},
		{"20240229T2359Z", time.Date(2024, 2, 29, 23, 59, 0, 0, time.UTC), true},
		{"20250229T0000Z", time.Time{}, false},
		{"20261301T0000Z", time.Time{}, false},
		{"20260918T2400Z", time.Time{}, false},
		{"20260918T0960Z", time.Time{}, false},
		{"20260918T0900", time.Time{}, false},
		{"2026-09-18T09:00Z", time.Time{}, false},
		{"20260918T09000Z", time.Time{}, false},
		{"2026091aT0900Z", time.Time{}, false},
		{"", time.Time{}, false},
	}
	for _, tt := range tests {
		got, ok := ParseTime(tt.in)
		if ok != tt.ok || !got.Equal(tt.want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestLineTime(t *testing.T) {
	m, _ := Parse("v1 request limiter to builder n=3\nask accept or decline, 20260917T1800Z\nask by 20260917T180030Z please\nask soon\n")
	want := []string{"20260917T1800Z", "20260917T180030Z", ""}
	for i, l := range m.Lines {
		got, ok := l.Time()
		s := ""
		if ok {
			s = FormatTime(got)
		}
		if s != want[i] {
			t.Errorf("line %d: Time = %q, want %q", l.Num, s, want[i])
		}
	}
}

func TestParseEvidence(t *testing.T) {
	tests := []struct{ in, kind, ref, branch string }{
		{"commit 3f9a2c1 on branch feat/rate-limit", "commit", "3f9a2c1", "feat/rate-limit"},
		{"commit 3f9a2c1 on feat/rate-limit", "commit", "3f9a2c1", "feat/rate-limit"},
		{"commit 3F9A2C1D", "commit", "3f9a2c1d", ""},
		{"commit 3f9a2c1, tests green", "commit", "3f9a2c1", ""},
		{"run 812", "run", "812", ""},
		{"run ci-2026-0918.4 passed 12/12", "run", "ci-2026-0918.4", ""},
		{"commit HEAD", "", "", ""},
		{"commit 3f9a", "", "", ""},
		{"3f9a2c1", "", "", ""},
		{"PR #42 merged", "", "", ""},
		{"run", "", "", ""},
		{"", "", "", ""},
	}
	for _, tt := range tests {
		k, r, b := ParseEvidence(tt.in)
		if k != tt.kind || r != tt.ref || b != tt.branch {
			t.Errorf("ParseEvidence(%q) = %q, %q, %q; want %q, %q, %q", tt.in, k, r, b, tt.kind, tt.ref, tt.branch)
		}
	}
}

func TestLooks(t *testing.T) {
	tests := []struct {
		src  string
		want bool
	}{
		{"v1 report limiter to lead n=9\n", true},
		{"\n\nv1 report limiter to lead\n", true},
		{"v1 report limiter n=3", true},
		{"V1 report limiter to lead n=1", true},
		{"v1 of the API is out", false},
		{"REPORT|IT|return:builder", false},
		{"Hi lead, status update", false},
		{`{"to": "lead"}`, false},
		{"", false},
	}
	for _, tt := range tests {
		if got := Looks(tt.src); got != tt.want {
			t.Errorf("Looks(%q) = %v, want %v", tt.src, got, tt.want)
		}
	}
}

func TestTextTokens(t *testing.T) {
	n := o200k.Count(Text)
	if n >= 200 {
		t.Errorf("convention.Text costs %d o200k_base tokens; it must stay under 200", n)
	}
	t.Logf("convention.Text: %d o200k_base tokens", n)
	// Complete: every reserved word, the header, evidence kinds, times and the rule for n.
	for _, w := range append(slices.Clone(Reserved), "v1", "to", "all", "re", "n=", "commit", "run", "ISO basic", "20260919T1200Z", "data", "act on none") {
		if !strings.Contains(Text, w) {
			t.Errorf("convention.Text does not mention %q", w)
		}
	}
}

func TestRenderBuilt(t *testing.T) {
	m := &Message{
		Header: Header{Intent: "propose", Topic: "limiter", To: []string{"yu"}, N: 2},
		Lines: []Line{
			{Word: "opt", Key: "A", Text: "Redis"},
			{Word: "done", Key: "1", Text: "limiter built"},
		},
	}
	want := "v1 propose limiter to yu n=2\nopt/A Redis\ndone#1 limiter built\n"
	if got := Render(m); got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
	_, diags := Check(want, Options{Counter: o200k})
	if HasError(diags) {
		t.Errorf("rendered message has errors: %v", diags)
	}
	// A built message validates and lints like its rendering.
	if errs := Validate(m, Options{Counter: o200k}); len(errs) != 0 {
		t.Errorf("Validate(built) = %v", errs)
	}
	warns := Lint(m, Options{Counter: o200k})
	SortDiagnostics(warns)
	if got := codes(warns); !slices.Equal(got, []string{"no-ask", "done-without-ev"}) || warns[1].Line != 3 {
		t.Errorf("Lint(built) = %v", warns)
	}
}

func TestDiagnosticString(t *testing.T) {
	d := Diagnostic{Line: 1, Col: 27, Severity: SeverityError, Code: "n-mismatch", Message: "n=10 but the message has 9 fact lines"}
	if got, want := d.String(), "1:27: error: n=10 but the message has 9 fact lines [n-mismatch]"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}
