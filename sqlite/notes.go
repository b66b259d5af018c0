package sqlite

import (
	"strings"

	"github.com/parleyhq/parley/internal/postjson"
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
		if !postjson.Plain(s) {
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
