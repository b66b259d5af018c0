// Package textline is parley's one definition of a line of message text, shared by the post
// check and by every edge that shows messages (history, the SSE stream, `parley read` and
// `read --follow`, the MCP read tool and the web transcript):
//
//   - LF ends a line. A CR directly before LF is part of that line end: CRLF is LF.
//   - Nothing else ends a line. A CR anywhere else, NEL (U+0085), LINE SEPARATOR (U+2028)
//     and PARAGRAPH SEPARATOR (U+2029) are refused in a posted body, because some reader
//     (a terminal, an SSE parser, a model's tokenizer, a browser) would break the line there.
//   - Bidirectional embedding, override and isolate controls (U+202A–U+202E, U+2066–U+2069)
//     are refused anywhere in a body: they reorder what a reader sees.
//   - A line whose first visible character, once whitespace and invisible format characters
//     are skipped and compatibility forms folded (NFKC, so `＃` is `#`), is `#` followed by a
//     digit reads as a history header, and one that is `!` followed by a space or nothing
//     reads as a server note: such a line is refused (see Check).
//
// Text stored before these rules may still hold such characters or lines. Every edge renders
// them the same way, through Split, Text and AppendBody: each character that could end a line
// or reorder text is written as the visible escape [U+XXXX], and a look-alike line has its
// leading characters up to and including the first visible one escaped the same way, so it
// stays one line of its message and can never read as a header or a note.
package textline

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Problem is why a body breaks the line rules: a position (1-based line; column in bytes,
// as parley's other diagnostics count), a short code, and a message and hint for people.
type Problem struct {
	Line, Col int
	Code      string // "cr", "line-break", "bidi", "control", "forgery"
	Message   string
	Hint      string
}

// Check applies the line rules to a body that is valid UTF-8 and returns the first problem in
// reading order, or nil. It also refuses the other control characters (C0 but tab and LF, DEL
// and C1), which upset terminals.
func Check(body string) *Problem {
	line, start := 1, 0
	for i := 0; i < len(body); {
		c := body[i]
		if c >= 0x20 && c < 0x7f {
			i++ // printable ASCII, nearly every byte of a body: no rule is about it
			continue
		}
		r, size := rune(c), 1
		if c >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(body[i:])
		}
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
				break // the CR of a CRLF: the LF ends the line
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
		i += size
	}
	return checkLine(strings.TrimSuffix(body[start:], "\r"), line)
}

func checkLine(l string, n int) *Problem {
	k, at, why := Lookalike(l)
	switch k {
	case Header:
		return &Problem{Line: n, Col: at + 1, Code: "forgery",
			Message: fmt.Sprintf("line %d starts like a history header (`#` and a digit)%s; history starts every message with `#<seq> <seat> <time>`", n, why),
			Hint:    "start the line with a word, e.g. `issue #12` or `see #12`: a line may not open with `#` and a digit, even behind spaces or invisible characters"}
	case Note:
		return &Problem{Line: n, Col: at + 1, Code: "forgery",
			Message: fmt.Sprintf("line %d starts like a server note (`!` and a space)%s; only the server writes `! ` lines", n, why),
			Hint:    "start the line with a word; `!` may open a line only when a visible character follows it, e.g. `!important`"}
	}
	return nil
}

// Kind is what a line would pass for.
type Kind int

const (
	Plain  Kind = iota
	Header      // a history header: `#` and a digit
	Note        // a server note: `!` and a space, or `!` alone
)

// Lookalike reports whether a line (without its line end) would read as a history header or
// a server note, the byte offset of its first visible character, and, for a line that only
// does so once something is skipped or folded, a phrase saying what (" once the invisible
// U+200B ZERO WIDTH SPACE before it is ignored").
func Lookalike(l string) (k Kind, at int, why string) {
	// Fast path: most lines start with a letter.
	if l == "" || (l[0] < 0x80 && l[0] != '#' && l[0] != '!' && !isSpaceByte(l[0])) {
		return Plain, 0, ""
	}
	var skipped rune = -1
	i := 0
	for i < len(l) {
		r, n := utf8.DecodeRuneInString(l[i:])
		if !isSpace(r) && !isInvisible(r) {
			break
		}
		if skipped < 0 || (isInvisible(r) && !isInvisible(skipped)) {
			skipped = r
		}
		i += n
	}
	if i == len(l) {
		return Plain, 0, ""
	}
	// The visible start, with invisible characters dropped and compatibility forms folded.
	var b strings.Builder
	for j, r := range l[i:] {
		if isInvisible(r) {
			continue
		}
		b.WriteRune(r)
		if j > 64 {
			break
		}
	}
	raw := b.String()
	folded := norm.NFKC.String(raw)
	first, n := utf8.DecodeRuneInString(folded)
	if c, ok := confusable[first]; ok {
		first = c
	}
	rest := folded[n:]
	second, _ := utf8.DecodeRuneInString(rest)
	switch {
	case first == '#' && rest != "" && unicode.IsDigit(second):
		k = Header
	case first == '!' && (rest == "" || isSpace(second)):
		k = Note
	default:
		return Plain, 0, ""
	}
	r0, n0 := utf8.DecodeRuneInString(raw)
	r1, _ := utf8.DecodeRuneInString(raw[n0:])
	switch {
	case skipped >= 0 && isInvisible(skipped):
		why = " once the invisible " + name(skipped) + " before it is ignored"
	case skipped >= 0:
		why = " once the whitespace before it is ignored"
	case r0 != first:
		why = fmt.Sprintf(" once %s is read as `%c`", name(r0), first)
	case k == Note && rest != "" && r1 != ' ':
		why = fmt.Sprintf(" once the %s after it is read as a space", name(r1))
	}
	return k, i, why
}

// confusable maps characters that look like `#` or `!` but that NFKC does not fold.
var confusable = map[rune]rune{
	0x01C3: '!', // LATIN LETTER RETROFLEX CLICK
	0x266F: '#', // MUSIC SHARP SIGN
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' }

// isSpace is any Unicode space, and the blank-looking U+2800 BRAILLE PATTERN BLANK.
func isSpace(r rune) bool { return unicode.IsSpace(r) || unicode.Is(unicode.Zs, r) || r == 0x2800 }

// isInvisible is a character that shows nothing of its own at the start of a line: format
// characters (Cf: ZWSP, ZWJ, word joiner, BOM, soft hyphen…), combining marks, variation
// selectors and the other default-ignorable code points (the Hangul fillers…).
func isInvisible(r rune) bool {
	return unicode.In(r, unicode.Cf, unicode.Mn, unicode.Me, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)
}

func isBidi(r rune) bool { return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) }

var names = map[rune]string{
	'\r': "CARRIAGE RETURN", 0x85: "NEXT LINE", 0xA0: "NO-BREAK SPACE", 0xAD: "SOFT HYPHEN",
	0x200B: "ZERO WIDTH SPACE", 0x200C: "ZERO WIDTH NON-JOINER", 0x200D: "ZERO WIDTH JOINER",
	0x200E: "LEFT-TO-RIGHT MARK", 0x200F: "RIGHT-TO-LEFT MARK", 0x2028: "LINE SEPARATOR",
	0x2029: "PARAGRAPH SEPARATOR", 0x202A: "LEFT-TO-RIGHT EMBEDDING", 0x202B: "RIGHT-TO-LEFT EMBEDDING",
	0x202C: "POP DIRECTIONAL FORMATTING", 0x202D: "LEFT-TO-RIGHT OVERRIDE", 0x202E: "RIGHT-TO-LEFT OVERRIDE",
	0x2060: "WORD JOINER", 0x2066: "LEFT-TO-RIGHT ISOLATE", 0x2067: "RIGHT-TO-LEFT ISOLATE",
	0x2068: "FIRST STRONG ISOLATE", 0x2069: "POP DIRECTIONAL ISOLATE", 0x3000: "IDEOGRAPHIC SPACE",
	0xFEFF: "BYTE ORDER MARK", 0xFF03: "FULLWIDTH NUMBER SIGN", 0xFF01: "FULLWIDTH EXCLAMATION MARK",
	0x2800: "BRAILLE PATTERN BLANK", 0x3164: "HANGUL FILLER", 0x01C3: "LATIN LETTER RETROFLEX CLICK",
	0x266F: "MUSIC SHARP SIGN", '\t': "TAB",
}

// name is "U+200B ZERO WIDTH SPACE", or just "U+XXXX" for a character without a name here.
func name(r rune) string {
	if n, ok := names[r]; ok {
		return fmt.Sprintf("U+%04X %s", r, n)
	}
	return fmt.Sprintf("U+%04X", r)
}
