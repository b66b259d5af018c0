package convention

import (
	"strings"
	"testing"
	"unicode"
)

// parseLineByFuncs is parseLine as it was written with strings.IndexAny and the Trim…Func
// pair: the reference FuzzParseLine holds parseLine, markAt, skipSpace and trimSpaceRight to.
func parseLineByFuncs(num int, raw string) Line {
	l := Line{Num: num, Raw: raw}
	first, ok := refFirstToken(raw)
	if !ok {
		return l
	}
	l.col = first.col
	word := first.s
	if i := strings.IndexAny(word, "#/"); i > 0 && reservedSet[word[:i]] && validKey(word[i+1:]) {
		l.Word, l.Mark, l.Key = word[:i], word[i:i+1], word[i+1:]
	} else {
		l.Word = word
	}
	l.Reserved = reservedSet[l.Word]
	rest := raw[first.col-1+len(first.s):]
	trimmed := strings.TrimLeftFunc(rest, unicode.IsSpace)
	l.Text = strings.TrimRightFunc(trimmed, unicode.IsSpace)
	if l.Text != "" {
		l.textCol = len(raw) - len(trimmed) + 1
	}
	return l
}

// refFirstToken is the first of refTokens (scanners_test.go), the rune-by-rune split.
func refFirstToken(s string) (tok, bool) {
	if t := refTokens(s); len(t) > 0 {
		return t[0], true
	}
	return tok{}, false
}

var lineSeeds = []string{"", "   ", "done#1 parsed the input", "  - done#1:  x \t", "ev#1 run load-1\r", "opt/A Redis",
	"done#bad key! x", "todo\u00a0next\u2003", "\u3000claim x\u0085", "ev/ x", "#1 x", "done# x", "done#1\xff y \xff",
	"日本#語 x", "cost 3\u00a0", "x\u200by"}

func checkParseLine(t *testing.T, raw string) {
	t.Helper()
	if got, want := parseLine(2, raw), parseLineByFuncs(2, raw); got != want {
		t.Errorf("parseLine(%q) = %#v, want %#v", raw, got, want)
	}
	if got, want := markAt(raw), strings.IndexAny(raw, "#/"); got != want {
		t.Errorf("markAt(%q) = %d, strings.IndexAny says %d", raw, got, want)
	}
	if got, want := raw[skipSpace(raw):], strings.TrimLeftFunc(raw, unicode.IsSpace); got != want {
		t.Errorf("skipSpace(%q) leaves %q, strings.TrimLeftFunc %q", raw, got, want)
	}
	if got, want := trimSpaceRight(raw), strings.TrimRightFunc(raw, unicode.IsSpace); got != want {
		t.Errorf("trimSpaceRight(%q) = %q, strings.TrimRightFunc %q", raw, got, want)
	}
}

func TestParseLineFast(t *testing.T) {
	for _, s := range lineSeeds {
		checkParseLine(t, s)
	}
	// Hand-worked: the word, key and text of a line, the text at byte 9, trailing blanks cut.
	l := parseLine(3, "done#1  fixed it \t\u00a0")
	if l.Word != "done" || l.Key != "1" || l.Mark != "#" || l.Text != "fixed it" || l.TextCol() != 9 {
		t.Errorf("parseLine = %#v", l)
	}
}

func FuzzParseLine(f *testing.F) {
	for _, s := range lineSeeds {
		f.Add(s)
	}
	f.Fuzz(checkParseLine)
}
