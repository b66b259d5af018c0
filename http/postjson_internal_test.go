package http

import (
	"bytes"
	"encoding/json"
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

// TestPostJSON checks a post's answer against encoding/json on postResponse itself (so that
// a change of its fields or tags shows here): the common one (notes, no warnings), and
// strings that need every kind of escape. internal/postjson's FuzzAppend tries the rest.
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
