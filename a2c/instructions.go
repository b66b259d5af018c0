package a2c

import (
	"sort"
	"strings"
)

var kindOrder = []byte{'p', 'm', 'c', 'r', 's', 'a', 'v', 'e', 'f'}

// Instructions returns the decode instructions for a session that used the features f:
// the short English a reader (a program or a model) needs to rebuild every record, and
// nothing about features the session did not use. full returns the whole description.
// The text is charged in full to the session it ships with.
func Instructions(f Features, full bool) string {
	if full {
		f = Features{Schema: true, Defaults: true, Absent: true, Extra: true, Bare: true, ValueRefs: true,
			Splices: true, Dictionary: true, RawEscapes: true, Kinds: map[byte]bool{}, Styles: map[byte]bool{}}
		for _, k := range kindOrder {
			f.Kinds[k] = true
		}
		for _, s := range styles {
			f.Styles[s.tag] = true
		}
	}
	var b strings.Builder
	b.WriteString("a2c/1: one JSON record per line.")
	if f.Splices {
		b.WriteString(" First replace «d.n» by the n bytes found d bytes back in the decoded text (lines end in \\n")
		if f.Dictionary {
			b.WriteString(", the dictionary text and a \\n come before line 1")
		}
		b.WriteString("); «« is «.")
	}
	if f.Schema {
		b.WriteString(" Fields split by |; the first is the kind")
		var ks []string
		for _, k := range kindOrder {
			if f.Kinds[k] {
				ks = append(ks, string(k)+"="+codeKinds[k])
			}
		}
		if len(ks) > 0 {
			b.WriteString(" (" + strings.Join(ks, " ") + ")")
		}
		b.WriteString(", then")
		if f.Kinds['c'] || f.Kinds['f'] {
			b.WriteString(" c,f: from to tool call_id args text result meta;")
		}
		if f.Kinds['r'] {
			b.WriteString(" r: from to tool call_id result text args meta;")
		}
		other := false
		for _, k := range kindOrder {
			if f.Kinds[k] && k != 'c' && k != 'f' && k != 'r' {
				other = true
			}
		}
		if other {
			b.WriteString(" others: from to text meta tool call_id args result;")
		}
		if f.Extra {
			b.WriteString(" then an object of other keys;")
		}
		b.WriteString(" cut at the end.")
		if f.Defaults {
			b.WriteString(" Empty from/to = as in the last record of that kind, empty tool/call_id = as in the previous record.")
		}
		if f.Absent {
			b.WriteString(" ~ = absent.")
		}
		b.WriteString(" String fields are raw text")
		if f.RawEscapes {
			b.WriteString(" with JSON escapes, \\| for |")
		}
		b.WriteString("; the others are values.")
	}
	if f.Bare {
		b.WriteString(" Values are JSON but keys and plain strings may be unquoted.")
	}
	if f.ValueRefs {
		b.WriteString(" $k = the k-th distinct string of 5+ bytes so far (from 0).")
	}
	if len(f.Styles) > 0 {
		tags := make([]string, 0, len(f.Styles))
		for t := range f.Styles {
			tags = append(tags, string(t))
		}
		sort.Strings(tags)
		b.WriteString(" %X before an object or array = a string holding it as")
		for i, t := range tags {
			if i > 0 {
				b.WriteString(";")
			}
			b.WriteString(" " + t + " " + styleByTag(t[0]).desc)
		}
		b.WriteString(".")
	}
	return b.String()
}
