package a2c

import (
	"sort"
	"strings"
)

// originalsNote explains splices into the originals (appendOriginal).
const originalsNote = " Before the text, as if prepended: earlier lines' %X strings as raw fields, each plus newline."

var kindOrder = []byte{'p', 'm', 'c', 'r', 's', 'a', 'v', 'e', 'f'}

// Instructions returns the decode instructions for a session that used the features f:
// the short English a reader (a program or a model) needs to rebuild every record, and
// nothing about features the session did not use. full returns the whole description.
// The text is charged in full to the session it ships with, so every word was weighed
// in tokens.
func Instructions(f Features, full bool) string {
	if full {
		f = Features{Schema: true, RawValues: true, Defaults: true, Absent: true, Extra: true, Bare: true, ValueRefs: true,
			Splices: true, Close: true, Long: true, Letters: true, Digits: true, DotEscaped: true, DictSpliced: true, Doubled: true, Originals: true, Quotes: true, Cut: true, Newlines: true, Dictionary: true, RawEscapes: true, Kinds: map[byte]bool{}, Styles: map[byte]bool{}}
		for _, k := range kindOrder {
			f.Kinds[k] = true
		}
		for _, s := range styles {
			f.Styles[s.tag] = true
		}
	}
	var b strings.Builder
	switch {
	case f.Prose:
		b.WriteString(proseNote)
	case f.Schema:
		b.WriteString("JSON records")
		n := f.Fields
		if full || f.Extra {
			n = nSlots
		}
		b.WriteString(": kind")
		for _, s := range fieldOrder[:n] {
			b.WriteString("|" + slotNames[s])
		}
		if f.Extra {
			b.WriteString("|other keys")
		}
		var ks []string
		for _, k := range kindOrder {
			if f.Kinds[k] {
				ks = append(ks, string(k)+"="+codeKinds[k])
			}
		}
		if len(ks) > 0 {
			b.WriteString(" (" + strings.Join(ks, " ") + ")")
		}
		b.WriteString(".")
		if f.Newlines {
			b.WriteString(" Other lines continue text.")
		}
		if f.Defaults {
			if n > slotTool {
				b.WriteString(" Blank from/to: last of same kind; tool/call_id: previous.")
			} else {
				b.WriteString(" Blank from/to: last of same kind.")
			}
		}
		if f.Absent {
			b.WriteString(" ~ none.")
		}
		if f.RawValues {
			b.WriteString(" args/result/meta: ~ then raw text is a string.")
		}
		if n > 0 {
			b.WriteString(" " + slotNames[fieldOrder[0]] + "…" + slotNames[fieldOrder[min(n, slotText+1)-1]] + " raw")
			if f.RawEscapes {
				b.WriteString(", \\-escaped")
			}
			b.WriteString(".")
		}
	default:
		b.WriteString("JSON records, one per line.")
	}
	if full {
		b.WriteString(" Header +t: instead " + proseNote)
	}
	if f.Splices {
		// The forms the session uses, then what n and d are: "^nnd" says that n is
		// written in two digits.
		var forms, notes []string
		if f.Letters {
			forms = append(forms, ".xd")
			notes = append(notes, "x: a-zA-Z=1-52")
		}
		if f.Digits || (!f.Letters && !f.Long) {
			forms = append(forms, "^nnd")
		}
		if f.Long {
			forms = append(forms, "?nnnd")
		}
		b.WriteString(" " + strings.Join(forms, ", ") + ": n bytes d back")
		switch {
		case f.DictSpliced:
			notes = append(notes, "spliced dictionary first")
		case f.Dictionary:
			notes = append(notes, "dictionary first")
		}
		if len(notes) > 0 {
			// One pair of brackets: "(x: a-zA-Z=1-52; dictionary first)" is a token
			// shorter than two.
			b.WriteString(" (" + strings.Join(notes, "; ") + ")")
		}
		if f.Close {
			b.WriteString(", » may end")
		}
		b.WriteString(".")
		if f.Originals {
			b.WriteString(originalsNote)
		}
	}
	if f.Doubled {
		b.WriteString(" ^^=^, ??=?.")
	}
	if f.DotEscaped {
		b.WriteString(" .» is a literal .")
	}
	if f.Bare {
		b.WriteString(" Quotes optional")
		if f.Quotes {
			b.WriteString(", ' too")
		}
		b.WriteString(".")
	}
	if f.ValueRefs {
		b.WriteString(" $k: k-th 5+ byte string.")
	}
	if len(f.Styles) > 0 {
		tags := make([]string, 0, len(f.Styles))
		for t := range f.Styles {
			tags = append(tags, string(t))
		}
		sort.Strings(tags)
		b.WriteString(" %X{…}: JSON as text")
		if f.Cut {
			b.WriteString(" (%Xn{…}: last n bytes cut)")
		}
		b.WriteString(",")
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
