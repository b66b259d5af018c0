package sqlite

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMarshalNotes: hand-worked cases, plain and escaped, against the bytes written out.
func TestMarshalNotes(t *testing.T) {
	for _, c := range []struct {
		notes []string
		want  string
	}{
		{nil, `[]`},
		{[]string{}, `[]`},
		{[]string{""}, `[""]`},
		{[]string{"run r1 not found", "é ✓"}, `["run r1 not found","é ✓"]`},
		{[]string{`a "b"`}, `["a \"b\""]`},
		{[]string{"<x> & y"}, `["\u003cx\u003e \u0026 y"]`},
		{[]string{"a<b"}, `["a\u003cb"]`},
		{[]string{"c>d"}, `["c\u003ed"]`},
		{[]string{"e&f"}, `["e\u0026f"]`},
		{[]string{"tab\there", "\u2028"}, `["tab\there","\u2028"]`},
		{[]string{"bad \xff byte"}, `["bad \ufffd byte"]`},
		{[]string{"del \x7f ok"}, "[\"del \x7f ok\"]"},
	} {
		got, err := marshalNotes(c.notes)
		if err != nil || got != c.want {
			t.Errorf("marshalNotes(%q) = %s, %v; want %s", c.notes, got, err, c.want)
		}
	}
	plain := []string{"run r1 not found; a runner seat must post it first"}
	if n := testing.AllocsPerRun(100, func() { marshalNotes(plain) }); n != 1 {
		t.Errorf("a plain note costs %v allocations, want 1", n)
	}
}

// FuzzMarshalNotes: marshalNotes writes what encoding/json writes, for any notes (the input
// is split into notes at each NUL byte).
func FuzzMarshalNotes(f *testing.F) {
	for _, s := range []string{"", "run x not found", "a\x00b", "<&>", "<", ">", "&", "\u2028\x00\u2029", "\xff\xfe", "é\x00\"\\", "\x7f\x01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		notes := strings.Split(s, "\x00")
		want, err := json.Marshal(notes)
		if err != nil {
			t.Fatal(err)
		}
		got, err := marshalNotes(notes)
		if err != nil || got != string(want) {
			t.Fatalf("marshalNotes(%q) = %s, %v; encoding/json writes %s", notes, got, err, want)
		}
	})
}
