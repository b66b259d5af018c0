package evidence

import (
	"strings"
	"testing"
)

// parseByFields is Parse as it was written with strings.Fields, kept as the reference that
// FuzzParseRef holds Parse to.
func parseByFields(text string) Ref {
	f := strings.Fields(text)
	if len(f) < 2 {
		return Ref{ID: strings.TrimSpace(text)}
	}
	id := strings.TrimRight(f[1], ",;.")
	switch strings.ToLower(f[0]) {
	case KindCommit:
		r := Ref{Kind: KindCommit, ID: strings.ToLower(id)}
		if len(f) >= 4 && f[2] == "on" {
			rest := f[3:]
			if rest[0] == "branch" && len(rest) >= 2 {
				rest = rest[1:]
			}
			r.Branch = strings.TrimRight(rest[0], ",;")
		}
		return r
	case KindRun:
		return Ref{Kind: KindRun, ID: id}
	}
	return Ref{ID: strings.TrimSpace(text)}
}

var parseRefCases = []string{
	"", " ", "run", "run ", "run ci-42", "  run\tci-42,  passed", "RUN ci-42.", "Run x;",
	"commit 3F9A2C1", "commit 3f9a2c1 on feat/x", "commit 3f9a2c1 on branch feat/x,",
	"commit 3f9a2c1 on branch", "commit abc on", "commit abc off main", "COMMIT abc ON main",
	"commit\u00a0abc on\u2003main", "ru\u00adn x", "\u212Aun x", "run\u0085id", "r\xffn x",
	"run \xff\xfe", "rUn\u3000id tail", "commıt abc", "notes about it", "commit",
	"\ufeffrun x", "run x\n", "commit a on b c d",
}

// TestParseRef holds Parse to the strings.Fields version on hand-picked texts: spaces of
// every kind, case, punctuation, invalid UTF-8.
func TestParseRef(t *testing.T) {
	for _, s := range parseRefCases {
		if got, want := Parse(s), parseByFields(s); got != want {
			t.Errorf("Parse(%q) = %#v, want %#v", s, got, want)
		}
	}
	// Hand-worked answers, independent of either version.
	if got := Parse(" run  ci-42, ok"); got != (Ref{Kind: KindRun, ID: "ci-42"}) {
		t.Errorf("run: %#v", got)
	}
	if got := Parse("Commit 3F9A2C1 on branch feat/x,"); got != (Ref{Kind: KindCommit, ID: "3f9a2c1", Branch: "feat/x"}) {
		t.Errorf("commit: %#v", got)
	}
}

// FuzzParseRef holds Parse, which reads the words one at a time, to the version that split
// them with strings.Fields.
func FuzzParseRef(f *testing.F) {
	for _, s := range parseRefCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Parse(s), parseByFields(s); got != want {
			t.Fatalf("Parse(%q) = %#v, want %#v", s, got, want)
		}
	})
}
