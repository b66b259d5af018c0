package textline

import (
	"fmt"
	"strings"
	"testing"
)

// checkByRunes is Check as it was written, deciding every rune of the body in one switch: the
// reference FuzzCheck holds Check, which passes printable ASCII by, to.
func checkByRunes(body string) *Problem {
	line, start := 1, 0
	for i, r := range body {
		col := i - start + 1
		switch {
		case r == '\n':
			if p := checkLine(strings.TrimSuffix(body[start:i], "\r"), line); p != nil {
				return p
			}
			line, start = line+1, i+1
		case r == '\t':
		case r == '\r':
			if i+1 < len(body) && body[i+1] == '\n' {
				continue
			}
			return &Problem{Line: line, Col: col, Code: "cr",
				Message: fmt.Sprintf("line %d, column %d: a carriage return (CR) that does not end the line; many readers break the line there, so the rest would show as a line of its own", line, col),
				Hint:    "end lines with LF (or CRLF) and remove the lone CR"}
		case r == 0x85 || r == 0x2028 || r == 0x2029:
			what := "control character U+0085 (NEXT LINE)"
			if r != 0x85 {
				what = name(r)
			}
			return &Problem{Line: line, Col: col, Code: "line-break",
				Message: fmt.Sprintf("line %d, column %d: %s ends a line on some readers; only LF ends a line here", line, col, what),
				Hint:    "use LF to end a line, or remove the character"}
		case isBidi(r):
			return &Problem{Line: line, Col: col, Code: "bidi",
				Message: fmt.Sprintf("line %d, column %d: the bidirectional control %s changes the order in which the text is shown", line, col, name(r)),
				Hint:    "remove it: right-to-left text needs no embedding, override or isolate controls"}
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return &Problem{Line: line, Col: col, Code: "control",
				Message: fmt.Sprintf("line %d, column %d: control character U+%04X", line, col, r),
				Hint:    "remove it; only tab, LF and a CR just before LF are allowed"}
		}
	}
	return checkLine(strings.TrimSuffix(body[start:], "\r"), line)
}

var checkSeeds = []string{"", "v1 note x to all n=1\nfact hi\n", "a\r\nb", "a\rb", "a\r", "\r\n\r\n", "a\n\u200b#1 x",
	"x\u2028y", "\u202e", "a\tb\x7f", "a\x00", "\u0085", "\u009f", "\u00a0ok", "#1 x", "ok\n! x", "日本\n#２ x",
	"a\n\n\n", "x\xff y", "line\r\r\n"}

func checkCheck(t *testing.T, body string) {
	t.Helper()
	got, want := Check(body), checkByRunes(body)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Check(%q) = %+v, deciding every rune gives %+v", body, got, want)
	}
}

func TestCheckPassesASCII(t *testing.T) {
	for _, s := range checkSeeds {
		checkCheck(t, s)
	}
	checkCheck(t, strings.Join(checkSeeds, "\n"))
	// Hand-worked: the lone CR of the third line is at its column 3.
	if p := Check("a\nb\ncc\rd\n"); p == nil || p.Line != 3 || p.Col != 3 || p.Code != "cr" {
		t.Errorf("Check = %+v, want cr at line 3 column 3", p)
	}
}

func FuzzCheck(f *testing.F) {
	for _, s := range checkSeeds {
		f.Add(s)
	}
	f.Fuzz(checkCheck)
}
