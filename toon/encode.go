package toon

import (
	"strconv"
	"strings"
)

// encoder lays out normalized values line by line. Every value it sees has been through
// normalize: Object, []any, string, number, bool or nil.
type encoder struct {
	b      strings.Builder
	indent int
	delim  byte
	lines  int
}

// startLine begins a new line at depth; the caller writes its content.
func (e *encoder) startLine(depth int) *strings.Builder {
	if e.lines > 0 {
		e.b.WriteByte('\n')
	}
	e.lines++
	for range depth * e.indent {
		e.b.WriteByte(' ')
	}
	return &e.b
}

func (e *encoder) root(v any) {
	switch t := v.(type) {
	case Object:
		// An empty root object is the empty document.
		e.fields(t, 0)
	case []any:
		e.array("", false, t, 0, 1)
	default:
		e.primitive(e.startLine(0), v)
	}
}

// fields writes each member of o as a field at depth.
func (e *encoder) fields(o Object, depth int) {
	for _, m := range o {
		e.field(m.Key, m.Value, depth)
	}
}

// field writes one object field at depth.
func (e *encoder) field(key string, v any, depth int) {
	switch t := v.(type) {
	case Object:
		b := e.startLine(depth)
		e.key(b, key)
		b.WriteByte(':')
		e.fields(t, depth+1)
	case []any:
		e.array(key, true, t, depth, depth+1)
	default:
		b := e.startLine(depth)
		e.key(b, key)
		b.WriteString(": ")
		e.primitive(b, v)
	}
}

// array writes the header of arr (under key when keyed; a root array has none) on a new line
// at depth, and its rows or items at childDepth.
func (e *encoder) array(key string, keyed bool, arr []any, depth, childDepth int) {
	b := e.startLine(depth)
	e.arrayBody(b, key, arr, childDepth, keyed, true)
}

// arrayBody writes the header of arr into the line b already holds and then the array's
// rows or items at childDepth. keyed says whether key is a real key (root and list-item
// arrays have none, and the empty string is a legal key that must be written quoted).
// table says whether the tabular form may be used: not for a keyless array that is itself a
// list item, where a fields header is ambiguous (later spec versions forbid it); the
// expanded list says the same thing in a form every decoder reads.
func (e *encoder) arrayBody(b *strings.Builder, key string, arr []any, childDepth int, keyed, table bool) {
	if keyed {
		e.key(b, key)
	}
	e.bracket(b, len(arr))
	switch {
	case len(arr) == 0:
		b.WriteByte(':')
	case allPrimitive(arr):
		b.WriteString(": ")
		for i, x := range arr {
			if i > 0 {
				b.WriteByte(e.delim)
			}
			e.primitive(b, x)
		}
	default:
		if cols := tableColumns(arr); table && cols != nil {
			b.WriteByte('{')
			for i, c := range cols {
				if i > 0 {
					b.WriteByte(e.delim)
				}
				e.key(b, c)
			}
			b.WriteString("}:")
			for _, x := range arr {
				o := x.(Object)
				rb := e.startLine(childDepth)
				for i, c := range cols {
					if i > 0 {
						rb.WriteByte(e.delim)
					}
					v, _ := o.Get(c)
					e.primitive(rb, v)
				}
			}
			return
		}
		b.WriteByte(':')
		for _, x := range arr {
			e.listItem(x, childDepth)
		}
	}
}

// listItem writes one element of an expanded list as a "- " line at depth.
func (e *encoder) listItem(v any, depth int) {
	b := e.startLine(depth)
	switch t := v.(type) {
	case []any:
		b.WriteString("- ")
		e.arrayBody(b, "", t, depth+1, false, false)
	case Object:
		if len(t) == 0 {
			b.WriteByte('-')
			return
		}
		b.WriteString("- ")
		// The first field shares the hyphen line; the object's other fields sit one level
		// deeper, so anything nested under the first field goes two levels deeper (§10).
		first := t[0]
		switch fv := first.Value.(type) {
		case Object:
			e.key(b, first.Key)
			b.WriteByte(':')
			e.fields(fv, depth+2)
		case []any:
			e.arrayBody(b, first.Key, fv, depth+2, true, true)
		default:
			e.key(b, first.Key)
			b.WriteString(": ")
			e.primitive(b, fv)
		}
		e.fields(t[1:], depth+1)
	default:
		b.WriteString("- ")
		e.primitive(b, v)
	}
}

// bracket writes [N] with the delimiter symbol when it is not the default comma.
func (e *encoder) bracket(b *strings.Builder, n int) {
	b.WriteByte('[')
	b.WriteString(strconv.Itoa(n))
	if e.delim != ',' {
		b.WriteByte(e.delim)
	}
	b.WriteByte(']')
}

func (e *encoder) key(b *strings.Builder, k string) {
	if validKey(k) {
		b.WriteString(k)
		return
	}
	quote(b, k)
}

// primitive writes a string, number, bool or null. The one encoder-wide delimiter is both
// the document delimiter and every array's active delimiter, so one quoting rule serves
// object values, inline arrays and table cells alike.
func (e *encoder) primitive(b *strings.Builder, v any) {
	switch t := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(t))
	case number:
		b.WriteString(string(t))
	case string:
		if needsQuotes(t, e.delim) {
			quote(b, t)
		} else {
			b.WriteString(t)
		}
	}
}

func isPrimitive(v any) bool {
	switch v.(type) {
	case Object, []any:
		return false
	}
	return true
}

func allPrimitive(arr []any) bool {
	for _, x := range arr {
		if !isPrimitive(x) {
			return false
		}
	}
	return true
}

// tableColumns returns the field names of arr when it can be written as a table: every
// element an object with the same non-empty set of distinct keys, every value a primitive.
// The columns follow the first object's key order; nil means use the expanded list.
func tableColumns(arr []any) []string {
	if len(arr) == 0 {
		return nil
	}
	first, ok := arr[0].(Object)
	if !ok || len(first) == 0 {
		return nil
	}
	cols := make([]string, len(first))
	set := make(map[string]bool, len(first))
	for i, m := range first {
		if set[m.Key] {
			return nil // a hand-built Object with a repeated key has no single value per cell
		}
		set[m.Key] = true
		cols[i] = m.Key
	}
	for _, x := range arr {
		o, ok := x.(Object)
		if !ok || len(o) != len(cols) {
			return nil
		}
		seen := make(map[string]bool, len(o))
		for _, m := range o {
			if !set[m.Key] || seen[m.Key] || !isPrimitive(m.Value) {
				return nil
			}
			seen[m.Key] = true
		}
	}
	return cols
}
