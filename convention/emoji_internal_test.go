package convention

import (
	"slices"
	"testing"
	"unicode"
	"unicode/utf8"
)

// emojiByRunes is the emoji rule as it was, ranging over every rune of the line: the
// reference FuzzEmoji holds the rule to, now that it skips the ASCII before the first
// character outside it.
func (l *linter) emojiByRunes(ln Line) {
	for i, r := range ln.Raw {
		if r < 0x2100 || r == '→' || !unicode.Is(unicode.So, r) {
			continue
		}
		end := i + utf8.RuneLen(r)
		for end < len(ln.Raw) {
			r2, n := utf8.DecodeRuneInString(ln.Raw[end:])
			if r2 != 0xFE0F && r2 != 0x200D && !unicode.Is(unicode.So, r2) && !unicode.Is(unicode.Sk, r2) {
				break
			}
			end += n
		}
		e := ln.Raw[i:end]
		if l.countTokens(e) < 2 {
			continue
		}
		l.warn(ln.Num, i+1, "emoji", quote(e)+" costs "+plural(l.countTokens(e), "token")+" and says nothing a word does not (done, claim, block…)", "")
		return
	}
}

var emojiSeeds = []string{"", "done ✅ shipped", "ok → next", "plain ascii line", "a\u2100b ✨✨", "ev#1 run x 🔥\u200d🔥\ufe0f",
	"日本語 ✅", "é 🎉", "\ufffd\ufffd x", "🚀"}

// checkEmoji compares the two on a line of valid UTF-8, which every parsed line is (Parse
// refuses anything else; both versions take U+FFFD's three bytes for an invalid byte's one).
func checkEmoji(t *testing.T, raw string) {
	t.Helper()
	if !utf8.ValidString(raw) {
		return
	}
	ln := Line{Num: 2, Raw: raw}
	a := &linter{counter: o200k}
	b := &linter{counter: o200k}
	a.emoji(ln)
	b.emojiByRunes(ln)
	if !slices.Equal(a.diags, b.diags) {
		t.Errorf("emoji(%q) = %v, ranging over every rune gives %v", raw, a.diags, b.diags)
	}
}

func TestEmojiSkipsASCII(t *testing.T) {
	for _, s := range emojiSeeds {
		checkEmoji(t, s)
	}
	// Hand-worked: the rocket starts at byte 6 of "done  🚀🚀" and is reported there.
	l := &linter{counter: o200k}
	l.emoji(Line{Num: 3, Raw: "done  🚀🚀"})
	if len(l.diags) != 1 || l.diags[0].Col != 7 || l.diags[0].Line != 3 {
		t.Errorf("emoji diagnostics %+v, want one at line 3 column 7", l.diags)
	}
}

func FuzzEmoji(f *testing.F) {
	for _, s := range emojiSeeds {
		f.Add(s)
	}
	f.Fuzz(checkEmoji)
}

// TestEmojiInvalidUTF8: a byte that is not UTF-8 decodes as U+FFFD, a symbol three bytes long,
// while it is one byte long; the rule once took the three and sliced past the line's end.
func TestEmojiInvalidUTF8(t *testing.T) {
	l := &linter{counter: o200k}
	for _, raw := range []string{"done x\xff", "done \xff\xfe", "done é\xff🚀🚀"} {
		l.diags = nil
		l.emoji(Line{Num: 1, Raw: raw})
	}
	if len(l.diags) != 1 || l.diags[0].Col != 9 {
		t.Errorf("emoji diagnostics %+v, want the rockets at column 9", l.diags)
	}
	m, _ := Parse("v1 note t to all n=1\ndone x\xff\n")
	Lint(m, Options{Counter: o200k})
}
