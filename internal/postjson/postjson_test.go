package postjson

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/parleyhq/parley/diag"
)

// answer has the fields and tags of the HTTP edge's answer to a post (http.postResponse;
// its own test compares the two writers on it).
type answer struct {
	Seq      int64             `json:"seq"`
	Tokens   int               `json:"tokens"`
	Notes    []string          `json:"notes"`
	Warnings []diag.Diagnostic `json:"warnings"`
}

func reference(t *testing.T, a answer) string {
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAppend checks a hand-written answer, and strings that need every kind of escape.
func TestAppend(t *testing.T) {
	want := `{"seq":12,"tokens":3,"notes":["a \u003c b","x \u0026 y","ok"],"warnings":[{"line":1,"col":2,"severity":"warning","code":"c","message":"m"}]}`
	if got := string(Append(nil, 12, 3, []string{"a < b", "x & y", "ok"}, []diag.Diagnostic{{Line: 1, Col: 2, Severity: "warning", Code: "c", Message: "m"}})); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	a := answer{Seq: 9, Tokens: -1, Notes: []string{"a\"b\\c", "<&>", "&", ">", "\\", "\"", "tab\there", "\x00\x1f\x7f", "é→\u2028\u2029", "bad \xff utf-8"},
		Warnings: []diag.Diagnostic{{Line: 3, Col: 1, Severity: "warning", Code: "more-diagnostics", Message: "m", Fix: "f <x>", More: 4}}}
	if got, want := string(Append(nil, a.Seq, a.Tokens, a.Notes, a.Warnings)), reference(t, a); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// FuzzAppend holds Append to encoding/json on any notes and diagnostic.
func FuzzAppend(f *testing.F) {
	f.Add(int64(7), 30, "! ev line 4 unverified: run load-17 not found", "", "date-format", "\"x\" is <y>", 0)
	f.Add(int64(-1), 0, "a\nb\x00\u2028", "fix\t", "c", "\xff", 3)
	f.Fuzz(func(t *testing.T, seq int64, tokens int, notes, fix, code, msg string, more int) {
		a := answer{Seq: seq, Tokens: tokens, Notes: strings.Split(notes, "\n"), Warnings: []diag.Diagnostic{}}
		if more >= 0 {
			a.Warnings = append(a.Warnings, diag.Diagnostic{Line: more, Col: tokens, Severity: fix, Code: code, Message: msg, Fix: fix, More: more % 3})
		}
		if got, want := string(Append(nil, a.Seq, a.Tokens, a.Notes, a.Warnings)), reference(t, a); got != want {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	})
}
