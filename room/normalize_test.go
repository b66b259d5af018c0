package room

import (
	"strings"
	"testing"
)

// normalizeByLines is normalize as first written, line by line, kept as the reference that
// the one-pass normalizeAppend must agree with.
func normalizeByLines(body string) string {
	body = strings.ReplaceAll(body, "\r\n", "\n")
	body = strings.ReplaceAll(body, "\r", "\n")
	lines := strings.Split(body, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

func TestNormalize(t *testing.T) {
	for body, want := range map[string]string{
		"":                      "",
		"a":                     "a",
		"a \t\nb\t\n\n":         "a\nb",
		"\n\na\r\n\r\nb \r c\n": "\n\na\n\nb\n c",
		"a\r\r\nb":              "a\n\nb",
		" \t\n \n":              "",
		"a\n \n\t\nb":           "a\n\n\nb",
		"x\r":                   "x",
	} {
		if got := normalize(body); got != want || normalizeByLines(body) != want {
			t.Errorf("normalize(%q) = %q, by lines %q; want %q", body, got, normalizeByLines(body), want)
		}
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"", "a \r\n\r\n b\t\r", "\n\n", "x\ry\n\tz \n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if got, want := normalize(body), normalizeByLines(body); got != want {
			t.Fatalf("normalize(%q) = %q, want %q", body, got, want)
		}
	})
}
