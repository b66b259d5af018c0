package textline

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Escaped reports whether edges show r as its visible escape [U+XXXX] rather than as itself:
// a CR that is not part of a line end, NEL, U+2028, U+2029, the bidirectional controls, and
// every other control character but tab and LF. A posted body holds none of them (Check
// refuses them); only text stored before the rules can.
func Escaped(r rune) bool {
	switch {
	case r == '\t' || r == '\n':
		return false
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return true
	case r == 0x2028 || r == 0x2029:
		return true
	}
	return isBidi(r)
}

// clean is a fast, conservative test that s holds no character Escaped would escape: it may
// say false for clean text (any byte that starts U+0080–U+00BF or U+2000–U+2FFF), never true
// for text that needs escaping.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f || c == 0xc2 || c == 0xe2 {
			return false
		}
	}
	return true
}

// appendEscape appends s with every Escaped character, and LF too when lf is set, written as
// [U+XXXX].
func appendEscape(dst []byte, s string, lf bool) []byte {
	if clean(s) && (!lf || strings.IndexByte(s, '\n') < 0) {
		return append(dst, s...)
	}
	for _, r := range s {
		if Escaped(r) || (lf && r == '\n') {
			dst = appendRune(dst, r)
			continue
		}
		dst = utf8.AppendRune(dst, r)
	}
	return dst
}

func appendRune(dst []byte, r rune) []byte {
	dst = append(dst, "[U+"...)
	h := strings.ToUpper(strconv.FormatInt(int64(r), 16))
	for i := len(h); i < 4; i++ {
		dst = append(dst, '0')
	}
	dst = append(dst, h...)
	return append(dst, ']')
}

// Split splits text into lines by the one definition: LF ends a line, and a CR directly before
// LF belongs to that line end. Within each line, every Escaped character is written as its
// visible escape, so no line can break further on any reader. Like strings.Split, text that
// ends in a line end gives a final empty line.
func Split(text string) []string {
	parts := strings.Split(text, "\n")
	for i, p := range parts {
		if i < len(parts)-1 {
			p = strings.TrimSuffix(p, "\r")
		}
		if !clean(p) {
			p = string(appendEscape(nil, p, false))
		}
		parts[i] = p
	}
	return parts
}

// Text is text with its lines as Split makes them, joined by LF: what an edge that shows
// history text whole (`parley read`, the MCP read tool) prints. It returns text itself when
// there is nothing to change, which is always the case for history this server rendered.
func Text(text string) string {
	if clean(text) {
		return text
	}
	return strings.Join(Split(text), "\n")
}

// AppendBody appends a message body as history shows it: its lines as Split makes them, each
// ended by LF (a body without a final line end gets one), and every line that Lookalike
// would take for a header or a note defused by escaping its characters up to and including
// its first visible one. For a body that Check accepts this is the body itself, with CRLF
// written as LF.
func AppendBody(dst []byte, body string) []byte {
	if clean(body) && !anyLookalike(body) {
		// The common case, and every body the rules accept without a CRLF: the body itself.
		dst = append(dst, body...)
		if body == "" || body[len(body)-1] != '\n' {
			dst = append(dst, '\n')
		}
		return dst
	}
	lines := Split(body)
	if len(lines) > 1 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for _, l := range lines {
		if k, at, _ := Lookalike(l); k != Plain {
			_, n := utf8.DecodeRuneInString(l[at:])
			for _, r := range l[:at+n] {
				dst = appendRune(dst, r)
			}
			l = l[at+n:]
		}
		dst = append(dst, l...)
		dst = append(dst, '\n')
	}
	return dst
}

// AppendNote appends one server note as a single line (without its line end): LF and every
// Escaped character in it are escaped.
func AppendNote(dst []byte, note string) []byte {
	return appendEscape(dst, note, true)
}

// anyLookalike reports whether any LF-ended line of body passes for a header or a note.
func anyLookalike(body string) bool {
	for body != "" {
		l, rest, _ := strings.Cut(body, "\n")
		if k, _, _ := Lookalike(l); k != Plain {
			return true
		}
		body = rest
	}
	return false
}
