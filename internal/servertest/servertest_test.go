package servertest

import (
	"reflect"
	"testing"
)

func TestParseHistory(t *testing.T) {
	text := "#1 alice 20260919T120000Z\nv1 note x to all n=1\nfact a\n\n" +
		"#2 bob 20260919T120001Z\nv1 note x to all n=2\ndone#1 ship\nev#1 run r1\n! ev#1 unverified: run r1 not found\n\n" +
		"#3 room 20260919T120002Z\nplain text without a final newline\n\n"
	got, err := ParseHistory(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{1, "alice", "20260919T120000Z", "v1 note x to all n=1\nfact a"},
		{2, "bob", "20260919T120001Z", "v1 note x to all n=2\ndone#1 ship\nev#1 run r1\n! ev#1 unverified: run r1 not found"},
		{3, "room", "20260919T120002Z", "plain text without a final newline"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if got, err := ParseHistory(""); err != nil || len(got) != 0 {
		t.Errorf("empty history: %v, %v", got, err)
	}
	if _, err := ParseHistory("stray line\n#1 a 20260919T120000Z\nx\n\n"); err == nil {
		t.Error("history that does not start with a header was accepted")
	}
}
