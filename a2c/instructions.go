package a2c

import (
	"sort"
	"strings"
)

var kindOrder = []byte{'p', 'm', 'c', 'r', 's', 'a', 'v', 'e', 'f'}

// Instructions returns the decode instructions for a session that used the features f:
// the short English a reader (a program or a model) needs to rebuild every record, and
// nothing about features the session did not use. full returns the whole description.
// The text is charged in full to the session it ships with, so every word was weighed
// in tokens.
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
	b.WriteString("a2c/1: a JSON record per line.")
	if f.Splices {
		b.WriteString(" «d.n» = the n bytes from d bytes back")
		if f.Dictionary {
			b.WriteString(" (the dictionary precedes line 1)")
		}
		b.WriteString("; ««=«.")
	}
	if f.Schema {
		b.WriteString(" Line: kind|from|to|tool|call_id|text|args|result|meta")
		if f.Extra {
			b.WriteString("|other keys")
		}
		b.WriteString(". Kinds:")
		for _, k := range kindOrder {
			if f.Kinds[k] {
				b.WriteString(" " + string(k) + " " + codeKinds[k])
			}
		}
		b.WriteString(".")
		if f.Defaults {
			b.WriteString(" Empty from/to: as last record of same kind; tool/call_id: as previous.")
		}
		if f.Absent {
			b.WriteString(" ~ absent.")
		}
		b.WriteString(" Fields to text are raw")
		if f.RawEscapes {
			b.WriteString(", \\-escaped")
		}
		b.WriteString(".")
	}
	if f.Bare {
		b.WriteString(" Quotes optional")
		if f.Quotes {
			b.WriteString("; ' quotes too")
		}
		b.WriteString(".")
	}
	if f.ValueRefs {
		b.WriteString(" $k: k-th string of 5+ bytes.")
	}
	if len(f.Styles) > 0 {
		tags := make([]string, 0, len(f.Styles))
		for t := range f.Styles {
			tags = append(tags, string(t))
		}
		sort.Strings(tags)
		b.WriteString(" %X{…}: a string holding that JSON written")
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
