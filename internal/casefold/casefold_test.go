package casefold

import (
	"regexp"
	"strings"
	"testing"
)

// TestAppend: hand-worked folds, and a stem found in the fold exactly where a (?i) expression
// of that stem matches.
func TestAppend(t *testing.T) {
	for in, want := range map[string]string{
		"":                 "",
		"Tests PASS":       "tests pass",
		"\u212Aelvin":      "kelvin",
		"\u017Fuite":       "suite",
		"caf\u00c9 \xff!":  "caf\u00c9 \ufffd!",
		"ÄBC":              "Äbc",
		"MiXeD 123 \u212A": "mixed 123 k",
	} {
		if got := string(Append(nil, in)); got != want {
			t.Errorf("Append(%q) = %q, want %q", in, got, want)
		}
	}
	for _, stem := range []string{"test", "pass", "ok", "suite", "sk"} {
		re := regexp.MustCompile(`(?i)` + stem)
		for _, in := range []string{"TEST", "te\u017Ft", "pa\u017F\u017F", "O\u212A", "\u017F\u212A", "Ok", "o k", "tes t", "caSe", "SUITE!"} {
			if got, want := strings.Contains(string(Append(nil, in)), stem), re.MatchString(in); got != want {
				t.Errorf("stem %q in the fold of %q: %v; the expression matches: %v", stem, in, got, want)
			}
		}
	}
}
