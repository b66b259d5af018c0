package http

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/parleyhq/parley"
)

// encodingJSON is what writeJSON writes for v: encoding/json's Encoder, HTML escaping on.
func encodingJSON(t *testing.T, v any) string {
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestPostJSON checks a post's answer against encoding/json: the common one (notes, no
// warnings), and strings that need every kind of escape.
func TestPostJSON(t *testing.T) {
	for _, out := range []postResponse{
		{Seq: 7, Tokens: 30, Notes: []string{"! ev line 4 unverified: run load-17 not found; a runner seat must post it first"}, Warnings: []parley.Diagnostic{}},
		{Seq: 1, Tokens: 0, Notes: []string{}, Warnings: []parley.Diagnostic{}},
		{Seq: 9, Tokens: -1, Notes: []string{"a\"b\\c", "<&>", "tab\there", "\x00\x1f\x7f", "é→\u2028\u2029", "bad \xff utf-8"},
			Warnings: []parley.Diagnostic{
				{Line: 2, Col: 5, Severity: "warning", Code: "date-format", Message: `"Sep 19" is a date with no year`},
				{Line: 3, Col: 1, Severity: "warning", Code: "more-diagnostics", Message: "m", Fix: "f <x>", More: 4},
			}},
	} {
		got := string(appendPostJSON(nil, out)) + "\n"
		if want := encodingJSON(t, out); got != want {
			t.Errorf("appendPostJSON:\n got %s\nwant %s", got, want)
		}
	}
	// A hand-written answer, so that the reference is not the only judge.
	want := `{"seq":12,"tokens":3,"notes":["a \u003c b"],"warnings":[]}`
	if got := string(appendPostJSON(nil, postResponse{Seq: 12, Tokens: 3, Notes: []string{"a < b"}, Warnings: []parley.Diagnostic{}})); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// FuzzPostJSON holds appendPostJSON to encoding/json on any notes and diagnostics.
func FuzzPostJSON(f *testing.F) {
	f.Add(int64(7), 30, "! ev line 4 unverified: run load-17 not found", "", "date-format", "\"x\" is <y>", 0)
	f.Add(int64(-1), 0, "a\nb\x00\u2028", "fix\t", "c", "\xff", 3)
	f.Fuzz(func(t *testing.T, seq int64, tokens int, notes, fix, code, msg string, more int) {
		out := postResponse{Seq: seq, Tokens: tokens, Notes: strings.Split(notes, "\n"), Warnings: []parley.Diagnostic{}}
		if more >= 0 {
			out.Warnings = append(out.Warnings, parley.Diagnostic{Line: more, Col: tokens, Severity: fix, Code: code, Message: msg, Fix: fix, More: more % 3})
		}
		if got, want := string(appendPostJSON(nil, out))+"\n", encodingJSON(t, out); got != want {
			t.Fatalf("appendPostJSON:\n got %s\nwant %s", got, want)
		}
	})
}
