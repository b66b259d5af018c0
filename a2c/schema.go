// Schema lines: a record as a kind letter and positional fields (Options.Schema).

package a2c

import (
	"strings"

	"github.com/parleyhq/parley/trace"
)

func (e *Encoder) schemaLine(dst []byte, rec *trace.Value) []byte {
	var slots [nSlots]*trace.Value
	var extra []trace.Member
	var kind *trace.Value
	seen := map[string]bool{}
	for i := range rec.Members {
		m := &rec.Members[i]
		first := !seen[m.Key]
		seen[m.Key] = true
		if m.Key == "kind" && first && m.Value.Kind == trace.String {
			kind = &m.Value
			continue
		}
		placed := false
		for s := 0; s < nSlots && first; s++ {
			if slotNames[s] == m.Key && (!isStringSlot(s) || m.Value.Kind == trace.String) {
				slots[s], placed = &m.Value, true
				break
			}
		}
		if !placed {
			if first && (m.Key == "kind" || isSlotName(m.Key)) {
				// The first occurrence has the wrong type: every occurrence of this
				// name goes to extra so that their order is kept.
				seen[m.Key+"\x00extra"] = true
			}
			extra = append(extra, *m)
		}
	}
	// A later duplicate of a name whose first occurrence took a slot stays in extra.
	kindKey := ""
	var code byte
	switch {
	case kind == nil:
		dst = append(dst, '~')
		e.feat.Absent = true
	default:
		kindKey = kind.Str
		if c, ok := kindCodes[kind.Str]; ok && !e.opt.KindNames {
			code = c
			dst = append(dst, c)
			e.feat.Kinds[c] = true
		} else {
			dst = appendQuotedCVN(dst, kind.Str)
		}
	}
	fields := make([][]byte, 0, nSlots+1)
	for _, s := range slotOrder(code) {
		var f []byte
		switch {
		case isStringSlot(s):
			var def field
			switch s {
			case slotFrom:
				def = e.st.lastFrom[kindKey]
			case slotTo:
				def = e.st.lastTo[kindKey]
			case slotTool:
				def = e.st.prevTool
			case slotCall:
				def = e.st.prevCall
			}
			cur := field{}
			if slots[s] != nil {
				cur = field{ok: true, s: slots[s].Str}
			}
			switch {
			case cur == def && cur.ok && e.opt.NoDefaults:
				f = e.rawString(f, cur.s)
			case cur == def:
				if cur.ok {
					e.feat.Defaults = true
				}
			case !cur.ok:
				f = append(f, '~')
				e.feat.Absent = true
			default:
				f = e.rawString(f, cur.s)
			}
		case slots[s] != nil:
			f = e.valueSlot(f, slots[s])
		}
		fields = append(fields, f)
	}
	if len(extra) > 0 {
		e.feat.Extra = true
		ev := trace.Value{Kind: trace.Object, Members: extra}
		fields = append(fields, e.value(nil, &ev))
	}
	for len(fields) > 0 && len(fields[len(fields)-1]) == 0 {
		fields = fields[:len(fields)-1]
	}
	e.feat.Fields = max(e.feat.Fields, min(len(fields), nSlots))
	for _, f := range fields {
		dst = append(dst, '|')
		dst = append(dst, f...)
	}
	// Defaults for the next line.
	get := func(s int) field {
		if slots[s] == nil {
			return field{}
		}
		return field{ok: true, s: slots[s].Str}
	}
	e.st.lastFrom[kindKey] = get(slotFrom)
	e.st.lastTo[kindKey] = get(slotTo)
	e.st.prevTool = get(slotTool)
	e.st.prevCall = get(slotCall)
	return dst
}

// rawString writes a string slot: its text with backslash escapes, up to the next |.
func (e *Encoder) rawString(dst []byte, s string) []byte {
	if ref, ok := e.refFor(s, func() int { return e.count(s) }); ok {
		e.feat.ValueRefs = true
		return append(dst, ref...)
	}
	if e.opt.Embedded {
		if v, st, cut, ok := detectEmbedded(s, e.buf); ok {
			if out, ok := e.tryEmbedded(dst, s, &v, st, cut, func() int { return e.count(s) }); ok {
				return out
			}
		}
	}
	if s == "" {
		e.st.register(s)
		return append(dst, `""`...)
	}
	switch s[0] {
	case '~', '$', '%', '"':
		dst = append(dst, '\\')
		e.feat.RawEscapes = true
	}
	dst, nl, esc := appendRawText(dst, s, e.opt.RawNewlines)
	e.feat.Newlines = e.feat.Newlines || nl
	e.feat.RawEscapes = e.feat.RawEscapes || esc
	e.st.register(s)
	return dst
}

// appendRawText writes s as the text of a raw field: backslash escapes, up to the next |,
// and with rawNewlines its newlines kept. It reports whether a newline was kept and
// whether anything was escaped.
func appendRawText(dst []byte, s string, rawNewlines bool) (out []byte, newlines, escaped bool) {
	start, full := len(dst), s
	if rawNewlines {
		// Newlines stay newlines (a model reads them as one token where \n costs two);
		// fixNewlines escapes the few that would look like the start of a record.
		for {
			i := strings.IndexByte(s, '\n')
			if i < 0 {
				break
			}
			dst = appendEscaped(dst, s[:i], '|')
			dst = append(dst, '\n')
			newlines = true
			s = s[i+1:]
		}
	}
	dst = appendEscaped(dst, s, '|')
	return dst, newlines, len(dst)-start != len(full)
}

// valueSlot writes the value of an args, result or meta slot. A string there may go as
// raw text after ~ (Options.RawValues) when that costs fewer tokens than the string
// quoted; a string that holds JSON or has a value reference is left to value.
func (e *Encoder) valueSlot(dst []byte, v *trace.Value) []byte {
	if v.Kind != trace.String || !e.opt.RawValues || v.Str == "" {
		return e.value(dst, v)
	}
	s := v.Str
	if e.opt.Embedded {
		if _, _, _, ok := detectEmbedded(s, e.buf); ok {
			return e.value(dst, v)
		}
	}
	if e.opt.ValueRefs && len(s) >= e.opt.minValueLen() {
		if _, ok := e.st.strs[s]; ok {
			return e.value(dst, v)
		}
	}
	raw, nl, esc := appendRawText([]byte{'~'}, s, e.opt.RawNewlines)
	saved := e.feat
	quoted := e.value(nil, v) // a plain string: quoted or bare, numbered as the raw one would be
	if e.count(string(raw)) >= e.count(string(quoted)) {
		return append(dst, quoted...)
	}
	e.feat = saved
	e.feat.RawValues = true
	e.feat.Newlines = e.feat.Newlines || nl
	e.feat.RawEscapes = e.feat.RawEscapes || esc
	return append(dst, raw...)
}
