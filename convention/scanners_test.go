package convention

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// The linter skips a regular expression when a cheap test shows it cannot match. Each such
// test must be a necessary condition of a match, or a date would go unreported; these check
// it against the regular expression itself.

// prefilterSeeds are lines with and without the dates the prefilters look for, with the
// case folds Go's (?i) knows (the Kelvin sign is a k, ſ an s).
var prefilterSeeds = []string{
	"2026-09-17", "run load-4711", "deploy 2026-09-17T18:00Z", "x1234-56-78y", "12-34-5678",
	"todo next batch after review", "next week", "NEXT WEEK", "next wee\u212a", "aſap", "thurſday",
	"end of the day", "this morning", "tues day", "by eod", "toDay", "ſunday", "cob", "next  week",
	"2026-9-17", "20260917", "", "-", "----------", "1111-11-1", "1111-11-11",
}

func FuzzDatePrefilters(f *testing.F) {
	for _, s := range prefilterSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if extISORe.MatchString(s) && !extISOShape(s) {
			t.Errorf("extISOShape(%q) = false, but extISORe matches %q", s, extISORe.FindString(s))
		}
		if relativeRe.MatchString(s) && !relativeWord(s) {
			t.Errorf("relativeWord(%q) = false, but relativeRe matches %q", s, relativeRe.FindString(s))
		}
	})
}

// TestDatePrefilters runs the seeds, and checks that each prefilter does skip what it is for.
func TestDatePrefilters(t *testing.T) {
	for _, s := range prefilterSeeds {
		if extISORe.MatchString(s) != extISOShape(s) && extISORe.MatchString(s) {
			t.Errorf("extISOShape(%q) misses extISORe's match", s)
		}
		if relativeRe.MatchString(s) && !relativeWord(s) {
			t.Errorf("relativeWord(%q) misses relativeRe's match %q", s, relativeRe.FindString(s))
		}
	}
	for s, want := range map[string]bool{"run load-4711": false, "on 2026-09-17": true, "1111-11-1": false} {
		if got := extISOShape(s); got != want {
			t.Errorf("extISOShape(%q) = %v, want %v", s, got, want)
		}
	}
	for s, want := range map[string]bool{"todo next batch after review": false, "next wee\u212a": true, "aſap": true, "thurſday": true, "monday": true, "mon day": false} {
		if got := relativeWord(s); got != want {
			t.Errorf("relativeWord(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestASCIIFolds pins what relativeWord assumes of Unicode: the only characters outside
// ASCII that (?i) matches to an ASCII letter are the Kelvin sign (k) and the long s (s).
func TestASCIIFolds(t *testing.T) {
	var got []string
	for c := 'a'; c <= 'z'; c++ {
		for r := unicode.SimpleFold(c); r != c; r = unicode.SimpleFold(r) {
			if r > unicode.MaxASCII {
				got = append(got, string(c)+"="+string(r))
			}
		}
	}
	if want := "k=\u212a s=ſ"; strings.Join(got, " ") != want {
		t.Errorf("non-ASCII folds of ASCII letters: %q, want %q", strings.Join(got, " "), want)
	}
}

// refTokens is tokens written the obvious way: fields on unicode.IsSpace, with the byte
// offset of each found by walking the runes.
func refTokens(s string) []tok {
	var out []tok
	start := -1
	for i, r := range s {
		if unicode.IsSpace(r) {
			if start >= 0 {
				out = append(out, tok{s[start:i], start + 1})
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, tok{s[start:], start + 1})
	}
	return out
}

// refTextWords is textWords with the standard library's trimming.
func refTextWords(s string) []tok {
	var out []tok
	for _, t := range refTokens(s) {
		trimmed := strings.TrimLeft(t.s, `([{<"'`)
		off := len(t.s) - len(trimmed)
		trimmed = strings.TrimRight(trimmed, `)]}>"',;:.!?`)
		if trimmed != "" {
			out = append(out, tok{trimmed, t.col + off})
		}
	}
	return out
}

var wordSeeds = []string{"", " ", "a", "  outcome batch 4711 of s00 finished ", "(\"x\")", "'\"", "a\u00a0b\u0085c\u2003d", "\xff\xfe x",
	"done#1 parsed (the input), and wrote: \"the summary\"!", "\t\v\f\r\n", "((())) [a] {b}. <c>? 'd',", "日本 語\u3000です"}

func FuzzTextWords(f *testing.F) {
	for _, s := range wordSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkWords(t, s)
	})
}

// checkWords compares tokens, firstToken and textWords on s with the references, and the
// words of s's lines found with one reused slice (as the linter does) with each found alone.
func checkWords(t *testing.T, s string) {
	t.Helper()
	want := refTokens(s)
	if got := tokens(s); !slices.Equal(got, want) {
		t.Errorf("tokens(%q) = %v, want %v", s, got, want)
	}
	if first, ok := firstToken(s); ok != (len(want) > 0) || ok && first != want[0] {
		t.Errorf("firstToken(%q) = %v, %v; tokens %v", s, first, ok, want)
	}
	if got, want := textWords(s), refTextWords(s); !slices.Equal(got, want) {
		t.Errorf("textWords(%q) = %v, want %v", s, got, want)
	}
	var reused []tok
	for _, line := range strings.Split(s, "\n") {
		reused = appendTextWords(reused[:0], line)
		if want := refTextWords(line); !slices.Equal(reused, want) && len(reused)+len(want) > 0 {
			t.Errorf("line %q with a reused slice: %v, want %v", line, reused, want)
		}
	}
}

func TestTextWords(t *testing.T) {
	for _, s := range wordSeeds {
		checkWords(t, s)
	}
	checkWords(t, strings.Join(wordSeeds, "\n"))
	// A hand-worked line: columns are 1-based bytes, punctuation trimmed, the NBSP a space.
	want := []tok{{"ok", 3}, {"a", 8}, {"b", 12}} // ( " o: ok at byte 3; NBSP is bytes 10-11
	if got := textWords(`("ok") a,` + "\u00a0b"); !slices.Equal(got, want) {
		t.Errorf("textWords = %v, want %v", got, want)
	}
}

// The expressions the linter's word tests were written from: isBullet and numberShape must
// answer as they do on every string.
var (
	bulletRe = regexp.MustCompile(`^(?:[-*•+]|\d{1,2}[.)])$`)
	numberRe = regexp.MustCompile(`^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$`)
)

var wordShapeSeeds = []string{
	"-", "*", "•", "+", "1.", "12)", "123.", "1)", "a.", "", ".", "1", "--", "•.", "0)",
	"1,234", "12,345,678.90", "+1.5", "-0.25", "1,23", "1234,567", ",123", "1,", "1.", ".5",
	"1.2.3", "+-1", "1,234.", "١٢.", "12,345,67", "1,234,567", "+", "4711", "load-4711",
}

func FuzzWordShapes(f *testing.F) {
	for _, s := range wordShapeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isBullet(s), bulletRe.MatchString(s); got != want {
			t.Errorf("isBullet(%q) = %v, bulletRe says %v", s, got, want)
		}
		if got, want := numberShape(s), numberRe.MatchString(s); got != want {
			t.Errorf("numberShape(%q) = %v, numberRe says %v", s, got, want)
		}
	})
}

// TestWordShapes runs the seeds, and hand-worked answers the expressions need not be trusted for.
func TestWordShapes(t *testing.T) {
	for _, s := range wordShapeSeeds {
		if got, want := isBullet(s), bulletRe.MatchString(s); got != want {
			t.Errorf("isBullet(%q) = %v, bulletRe says %v", s, got, want)
		}
		if got, want := numberShape(s), numberRe.MatchString(s); got != want {
			t.Errorf("numberShape(%q) = %v, numberRe says %v", s, got, want)
		}
	}
	for s, want := range map[string]bool{"12)": true, "123.": false, "•": true, "a)": false} {
		if got := isBullet(s); got != want {
			t.Errorf("isBullet(%q) = %v, want %v", s, got, want)
		}
	}
	for s, want := range map[string]bool{"1,234.5": true, "1234,567": false, "-7": true, "1,": false, "12,345,67": false} {
		if got := numberShape(s); got != want {
			t.Errorf("numberShape(%q) = %v, want %v", s, got, want)
		}
	}
}
