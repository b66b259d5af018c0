package convention

import (
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
