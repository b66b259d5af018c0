package sqlite

import (
	"strings"
	"unicode/utf8"

	"github.com/parleyhq/parley/internal/sqlstore"
)

// marshalNotes is sqlstore.MarshalNotes, the same bytes, written in one allocation when no
// note needs escaping, as every note the server writes itself (evidence verdicts) does;
// anything else goes through sqlstore.MarshalNotes (encoding/json). FuzzMarshalNotes
// compares the two.
func marshalNotes(notes []string) (string, error) {
	if len(notes) == 0 {
		return "[]", nil
	}
	n := len(notes) + 1 // the brackets and the commas
	for _, s := range notes {
		if !plainJSON(s) {
			return sqlstore.MarshalNotes(notes)
		}
		n += len(s) + 2
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteByte('[')
	for i, s := range notes {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(s)
		b.WriteByte('"')
	}
	b.WriteByte(']')
	return b.String(), nil
}

// plainJSON tells whether encoding/json writes s between its quotes as it is: valid UTF-8
// without control characters, '"', '\\', the characters it escapes for HTML ('<', '>', '&'),
// U+2028 or U+2029.
func plainJSON(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			return false
		}
		i += size
	}
	return true
}
