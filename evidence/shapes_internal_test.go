package evidence

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// TestShapesMatchTheirPatterns holds the hand-written shape checks to the regular expressions
// they replace, on edge cases and on random strings over the bytes that matter.
func TestShapesMatchTheirPatterns(t *testing.T) {
	checks := []struct {
		name string
		re   *regexp.Regexp
		fn   func(string) bool
	}{
		{"sha", regexp.MustCompile(`^[0-9a-f]{4,64}$`), shaShape},
		{"hex", regexp.MustCompile(`^[0-9a-f]+$`), func(s string) bool { return s != "" && isHex(s) }},
		{"branch", regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._/+-]{0,199}$`), branchName},
		{"run", regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._:/-]{0,127}$`), runIDShape},
	}
	long := func(n int, c byte) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = c
		}
		return string(b)
	}
	cases := []string{"", "a", "abc", "abcd", "ABCD", "_x", "-x", ".x", "x-", "x:y", "x+y", "x/y",
		"feat/rate-limit", "v1.2.3", "deadbeef", "g123", long(64, 'a'), long(65, 'a'),
		long(128, 'b'), long(129, 'b'), long(200, 'c'), long(201, 'c'), "a\n", "a b", "é", "a\x00"}
	alphabet := "09afgzAZ_.-+/:  \n\xff"
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	for _, c := range checks {
		for _, s := range cases {
			if got, want := c.fn(s), c.re.MatchString(s); got != want {
				t.Errorf("%s(%q) = %v, the pattern says %v", c.name, s, got, want)
			}
		}
	}
}
