package convention

import (
	"bytes"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// The linter skips a regular expression when a cheap test shows it cannot match. Each such
// test must be a necessary condition of a match, or a date would go unreported; these check
// it against the regular expression itself.

// prefilterSeeds are lines with and without the dates the prefilters look for, with the
// case folds Go's (?i) knows (the Kelvin sign is a k, ſ an s).
var prefilterSeeds = []string{
	"12:30 UTC", "2026/09/17", "20260917T1200", "Sept 3, 2026", "\u0130stanbul 9am",
	"2026-09-17", "run load-4711", "deploy 2026-09-17T18:00Z", "x1234-56-78y", "12-34-5678",
	"todo next batch after review", "next week", "NEXT WEEK", "next wee\u212a", "aſap", "thurſday",
	"end of the day", "this morning", "tues day", "by eod", "toDay", "ſunday", "cob", "next  week",
	"2026-9-17", "20260917", "", "-", "----------", "1111-11-1", "1111-11-11",
	"TOMORRO\xffW", "yesterda\u212a", "\xe2\x84", "to\u017fday", "asap", "ASAP", "mon\xc3day",
	"ja", "jan", "xde", "dec", "sept 3", "end o", "end of", "this", "this ", "asa", "asap",
}

func FuzzDatePrefilters(f *testing.F) {
	for _, s := range append(prefilterSeeds, monthClockSeeds...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if extISORe.MatchString(s) && !extISOShape(s) {
			t.Errorf("extISOShape(%q) = false, but extISORe matches %q", s, extISORe.FindString(s))
		}
		if relativeRe.MatchString(s) && !relativeWord(s) {
			t.Errorf("relativeWord(%q) = false, but relativeRe matches %q", s, relativeRe.FindString(s))
		}
		if got, want := relativeWord(s), refRelativeWord(s); got != want {
			t.Errorf("relativeWord(%q) = %v, the rune-by-rune fold says %v", s, got, want)
		}
		checkDateHints(t, s)
		checkMonthClockShapes(t, s)
		lower := strings.ToLower(s)
		if got, want := mentionsMonth(lower), refContainsAny(lower, monthStems); got != want {
			t.Errorf("mentionsMonth(%q) = %v, strings.Contains says %v", lower, got, want)
		}
		if got, want := mentionsRelative(lower), refContainsAny(lower, relativeStems); got != want {
			t.Errorf("mentionsRelative(%q) = %v, strings.Contains says %v", lower, got, want)
		}
	})
}

// checkMonthClockShapes holds monthBeforeDay and clockShape to the expressions they stand
// in front of: wherever one matches, the test must pass (on a line within ASCII for namedRe,
// lowered, as findDates asks it).
func checkMonthClockShapes(t *testing.T, s string) {
	t.Helper()
	if m := namedRe.FindString(s); m != "" && !dateHintsOf(s).wide && !monthBeforeDay(strings.ToLower(s), monthFormIndex) {
		t.Errorf("monthBeforeDay(%q) = false, but namedRe matches %q", strings.ToLower(s), m)
	}
	if m := noYearRe.FindString(s); m != "" && !monthBeforeDay(s, capitalMonthIndex) {
		t.Errorf("monthBeforeDay(%q, capitalised) = false, but noYearRe matches %q", s, m)
	}
	h := dateHintsOf(s)
	for _, day := range []bool{false, true} {
		if got, want := lowerFactsFor(s, h, day), lowerFactsOf(strings.ToLower(s), h.digit, day); got != want {
			t.Errorf("lowerFactsFor(%q, day %v) = %+v, on strings.ToLower %+v", s, day, got, want)
		}
	}
	if m := clockRe.FindString(s); m != "" && !clockShape(s) {
		t.Errorf("clockShape(%q) = false, but clockRe matches %q", s, m)
	}
	if w := strings.ContainsFunc(s, func(r rune) bool { return r >= utf8.RuneSelf }) || !utf8.ValidString(s); w != dateHintsOf(s).wide {
		t.Errorf("dateHintsOf(%q).wide = %v, want %v", s, dateHintsOf(s).wide, w)
	}
}

// monthClockSeeds are dates and times in every form namedRe, noYearRe and clockRe know, and
// lines near them that none of them matches.
var monthClockSeeds = []string{
	"Sep 19, 2026", "September 19th, 2026", "19 Sept. 2026", "19th of december, 2026", "DEC 3 2026", "dec.\t3 2026",
	"9pm on Sep 19, 2026", "Friday, Jun 5 2026 at 9:30", "Jan 5", "June 7th", "Sept. 9", "may 3", "May 3 2026",
	"ask decide 20260918T0900Z: mock", "decide 2026", "mark 2026", "9:30", "9 A.M", "5pM", "12:0", "9:3x", "at 9 a.m.",
	"9\vpm", "9\u00a0pm", "SEP 5 2026 ASAP", "Next Week on DEC. 3, 2026", "DAY \u0130 2026", "Jan\u00a05", "auguſt 5, 2026", "decide: x 2026 ſep 5, 2026", "1 mar,\n2026", "Dec,5",
}

// checkDateHints holds dateHintsOf to the searches it replaces.
func checkDateHints(t *testing.T, s string) {
	t.Helper()
	h := dateHintsOf(s)
	want := dateHints{digit: strings.ContainsAny(s, "0123456789"), upperT: strings.Contains(s, "T"),
		slash: strings.Contains(s, "/"), colon: strings.Contains(s, ":")}
	if got := (dateHints{digit: h.digit, upperT: h.upperT, slash: h.slash, colon: h.colon}); got != want {
		t.Errorf("dateHintsOf(%q) = %+v, the searches say %+v", s, got, want)
	}
	lower := strings.ToLower(s)
	meridiem := strings.Contains(lower, "am") || strings.Contains(lower, "pm") || strings.Contains(lower, "a.m") || strings.Contains(lower, "p.m")
	if h.meridiem != meridiem {
		t.Errorf("dateHintsOf(%q).meridiem = %v, the searches of %q say %v", s, h.meridiem, lower, meridiem)
	}
	if !h.folds && strings.ToLower(s) != s {
		t.Errorf("dateHintsOf(%q) says it has nothing to lower, but strings.ToLower gives %q", s, strings.ToLower(s))
	}
}

// refRelativeWord is relativeWord written the obvious way: the text folded rune by rune (as
// relativeRe's (?i) folds it), then searched for each word.
func refRelativeWord(s string) bool {
	var f []byte
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z':
			r += 'a' - 'A'
		case r == 0x212A: // Kelvin sign
			r = 'k'
		case r == 0x017F: // long s
			r = 's'
		}
		f = utf8.AppendRune(f, r)
	}
	return slices.ContainsFunc(relativeWords, func(w string) bool { return bytes.Contains(f, []byte(w)) })
}

// refContainsAny is the stem tests written the obvious way, one strings.Contains per stem.
func refContainsAny(s string, stems []string) bool {
	return slices.ContainsFunc(stems, func(m string) bool { return strings.Contains(s, m) })
}

// TestDatePrefilters runs the seeds, and checks that each prefilter does skip what it is for.
func TestDatePrefilters(t *testing.T) {
	for _, s := range append(prefilterSeeds, monthClockSeeds...) {
		checkMonthClockShapes(t, s)
	}
	for s, want := range map[string]bool{"Sep 19, 2026": true, "decide 2026": false, "ask decide 20260918T0900Z: mock": false, "mark 2026": false, "19 Sept. 2026": true} {
		if got := monthBeforeDay(strings.ToLower(s), monthFormIndex); got != want {
			t.Errorf("monthBeforeDay(%q) = %v, want %v", s, got, want)
		}
	}
	for s, want := range map[string]bool{"ask decide 20260918T0900Z: mock": false, "9:30": true, "at 9 a.m.": true, "p=0.7: m": false} {
		if got := clockShape(s); got != want {
			t.Errorf("clockShape(%q) = %v, want %v", s, got, want)
		}
	}
	for _, s := range append(prefilterSeeds, "at 9:30 T/x", "9 A.M", "5pM", "p.", "a", "xa.", "P.m.", "9\u0130am", "20260917T1200", "\u0130 x", "DEC 3", "a/b:c") {
		checkDateHints(t, s)
	}
	for _, s := range prefilterSeeds {
		if extISORe.MatchString(s) != extISOShape(s) && extISORe.MatchString(s) {
			t.Errorf("extISOShape(%q) misses extISORe's match", s)
		}
		if relativeRe.MatchString(s) && !relativeWord(s) {
			t.Errorf("relativeWord(%q) misses relativeRe's match %q", s, relativeRe.FindString(s))
		}
	}
	for s, want := range map[string]bool{"todo next batch": true, "ja n": false, "in dec": true, "de": false, "this": false, "cob": true} {
		if got := mentionsMonth(s) || mentionsRelative(s); got != want {
			t.Errorf("mentionsMonth or mentionsRelative(%q) = %v, want %v", s, got, want)
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

// TestLowerToASCII pins what dateHintsOf assumes of strings.ToLower: the only characters
// outside ASCII it lowers into ASCII are U+0130 (to i) and the Kelvin sign (to k), so an a,
// p, m or '.' of the lowered text is one of the text.
func TestLowerToASCII(t *testing.T) {
	var got []string
	for r := rune(utf8.RuneSelf); r <= unicode.MaxRune; r++ {
		if l := []rune(strings.ToLower(string(r))); len(l) > 0 && l[0] < utf8.RuneSelf {
			got = append(got, fmt.Sprintf("%U=%c", r, l[0]))
		}
	}
	if want := "U+0130=i U+212A=k"; strings.Join(got, " ") != want {
		t.Errorf("non-ASCII characters lowered into ASCII: %q, want %q", strings.Join(got, " "), want)
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
	"finished", "Finished", "finisheD", "rate_limit", "RATE_LIMIT", "a.b/c:d", "x7f3k9q2", "ÄBCDEF1", "abc\x7fdef1",
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
		if got, want := idShaped(s), refIDShaped(s); got != want {
			t.Errorf("idShaped(%q) = %v, the tests written out say %v", s, got, want)
		}
	})
}

// refIDShaped is idShaped as idCost first wrote it: no path, URL or address characters,
// every rune an ASCII letter, digit, '_' or '-', and a digit or an upper-case letter after
// the first.
func refIDShaped(w string) bool {
	if len(w) < 6 || strings.ContainsAny(w, "/.@=$~+:") || strings.Contains(w, "://") {
		return false
	}
	for _, r := range w {
		if !(r < unicode.MaxASCII && (isAlnum(byte(r)) || r == '-')) {
			return false
		}
	}
	return strings.IndexFunc(w, unicode.IsDigit) >= 0 || strings.IndexFunc(w[1:], unicode.IsUpper) >= 0
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

// checkTextWordsIn holds textWordsIn, which takes a line's text words from the words of its
// Raw, to textWords of its Text, on every line Parse makes of src.
func checkTextWordsIn(t *testing.T, src string) {
	t.Helper()
	m, _ := Parse(src)
	for _, ln := range m.Lines {
		raw := textWords(ln.Raw)
		got := textWordsIn(nil, ln, raw)
		if want := textWords(ln.Text); !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Errorf("line %q: textWordsIn = %v, textWords(Text) = %v", ln.Raw, got, want)
		}
	}
}

func FuzzTextWordsIn(f *testing.F) {
	for _, s := range wordSeeds {
		f.Add("v1 note t to all n=1\n" + s)
	}
	f.Fuzz(checkTextWordsIn)
}

func TestTextWordsIn(t *testing.T) {
	for _, s := range wordSeeds {
		checkTextWordsIn(t, "v1 note t to all n=1\n"+s)
	}
	checkTextWordsIn(t, "v1 note t to all n=3\n  - done#1: (fixed)  the \"x\", \u00a0y\u2003 \n\u3000ev#1\trun r-1;\nclaim\xff z\n")
	// A hand-worked line: Text "(a) b" starts at byte 8 of Raw, so its words are at 2 and 5.
	m, _ := Parse("v1 note t to all n=1\n done  (a) b\n")
	ln := m.Lines[0]
	if got, want := textWordsIn(nil, ln, textWords(ln.Raw)), []tok{{"a", 2}, {"b", 5}}; !slices.Equal(got, want) {
		t.Errorf("textWordsIn = %v, want %v", got, want)
	}
}

// BenchmarkTextWords splits the lines of the post `parley bench server` sends into words, as
// the linter does once a line.
func BenchmarkTextWords(b *testing.B) {
	lines := strings.Split("v1 report load to s03 n=4\noutcome batch 1234 of s02 finished\ndone#1 parsed the input and wrote the summary\nev#1 run load-1234\ntodo next batch after review", "\n")
	var buf [16]tok
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			appendTextWords(buf[:0], l)
		}
	}
}

// aboutTestsSeeds are done lines about tests in every word testsRe knows, in odd cases and
// folds (the long s, the Kelvin sign), and lines near them that are not.
var aboutTestsSeeds = []string{"limiter lib/rate-limit.ts sliding window", "unit tests pass", "TESTED", "teſts green",
	"CI is green", "decide the spec", "e2e", "go test ./...", "go  test", "vitest run", "Jest", "coverage 80%", "suite",
	"contest", "latest", "passport", "cities", "ci", "x_ci", "ci_x", "\u212a ci", "PASSING", "pass", "", "te\xffst"}

func checkAboutTests(t *testing.T, s string) {
	t.Helper()
	if got, want := aboutTests(s), testsRe.MatchString(s); got != want {
		t.Errorf("aboutTests(%q) = %v, testsRe says %v", s, got, want)
	}
}

func TestAboutTests(t *testing.T) {
	for _, s := range aboutTestsSeeds {
		checkAboutTests(t, s)
	}
	// The stems do skip what they are for.
	if foldedStemsIn("limiter lib/rate-limit.ts sliding window", testStemIndex) {
		t.Error("a done line with no word of testsRe passed the stems")
	}
}

func FuzzAboutTests(f *testing.F) {
	for _, s := range aboutTestsSeeds {
		f.Add(s)
	}
	f.Fuzz(checkAboutTests)
}

// windowSeeds are lines with near-ISO-basic times, slashed dates and decisions, placed at the
// ends of lines, run together and next to each other, and lines that only come near.
var windowSeeds = []string{"ask decide 20260918T0900Z: mock", "20260919T1200", "20260919T12:00:00Z", "x20260919T12:00:00Z20260920T13Z",
	"120260919T1200", "20260919T1", "20260919T12", "2026091T12", "20260919T12:0", "20260919T1200:00Z", "T20260919T12 T",
	"20260919T12\xff", "20260919T12:\u00e9", "19/09/2026", "2026/09/19", "1/2/3", "1/2/34", "feat/x2", "a1/23/4567b",
	"9//2026", "1/234/56", "We decided to ship", "SIGNED OFF by ops", "went  with", "Decidir", "\u212a go with",
	"decider yu (CTO)", "decider yu; Mara cho\u017fe B", "Mara pic\u212aed B", "Bob \u017figned off", "ops (lead) has approved it", "DECIDED"}

func checkWindows(t *testing.T, s string) {
	t.Helper()
	if got, want := nearBasicMatches(s), nearBasicRe.FindAllStringSubmatchIndex(s, -1); !reflect.DeepEqual(got, want) {
		t.Errorf("nearBasicMatches(%q) = %v, nearBasicRe gives %v", s, got, want)
	}
	if m := slashRe.FindString(s); m != "" && !slashShape(s) {
		t.Errorf("slashShape(%q) = false, but slashRe matches %q", s, m)
	}
	var want []int
	lower := strings.ToLower(s)
	for _, h := range decidedHints {
		if strings.Contains(lower, h) {
			want = decidedRe.FindStringSubmatchIndex(s)
			break
		}
	}
	if got, want := lowerStemsIn(s, decidedHintIndex), refContainsAny(strings.ToLower(s), decidedHints); got != want {
		t.Errorf("lowerStemsIn(%q) = %v, strings.Contains of the lowered line says %v", s, got, want)
	}
	if got := decidedIndex(s); !reflect.DeepEqual(got, want) {
		t.Errorf("decidedIndex(%q) = %v, the hint-by-hint search gives %v", s, got, want)
	}
}

func TestWindows(t *testing.T) {
	for _, s := range windowSeeds {
		checkWindows(t, s)
	}
	checkWindows(t, strings.Join(windowSeeds, " "))
	if slashShape("feat/x2 1/3") || !slashShape("on 19/09/2026") {
		t.Error("slashShape does not skip what it is for")
	}
}

func FuzzWindows(f *testing.F) {
	for _, s := range windowSeeds {
		f.Add(s)
	}
	f.Fuzz(checkWindows)
}
