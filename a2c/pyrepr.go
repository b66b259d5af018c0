package a2c

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/parleyhq/parley/trace"
)

// Python's repr of dicts and lists is what many tools return when they print a result
// instead of serialising it ({'id': 'X', 'ok': True}). Style P re-reads such a string
// as JSON data when writing it back the way Python's repr does gives the same bytes:
// dicts with string keys, lists, strings, numbers, True, False and None. Tuples, sets
// and other objects do not re-read; those strings stay text.

// parsePyRepr parses a Python literal into a JSON value.
func parsePyRepr(s string) (trace.Value, bool) {
	p := pyParser{s: s}
	v, ok := p.value(0)
	return v, ok && p.pos == len(s)
}

type pyParser struct {
	s   string
	pos int
}

func (p *pyParser) lit(w string) bool {
	if strings.HasPrefix(p.s[p.pos:], w) {
		p.pos += len(w)
		return true
	}
	return false
}

func (p *pyParser) value(depth int) (trace.Value, bool) {
	if depth > maxDepth || p.pos >= len(p.s) {
		return trace.Value{}, false
	}
	switch c := p.s[p.pos]; {
	case c == '{':
		p.pos++
		v := trace.Value{Kind: trace.Object, Members: []trace.Member{}}
		if p.lit("}") {
			return v, true
		}
		for {
			if p.pos >= len(p.s) || (p.s[p.pos] != '\'' && p.s[p.pos] != '"') {
				return v, false
			}
			k, ok := p.str()
			if !ok || !p.lit(": ") {
				return v, false
			}
			m, ok := p.value(depth + 1)
			if !ok {
				return v, false
			}
			v.Members = append(v.Members, trace.Member{Key: k, Value: m})
			if p.lit(", ") {
				continue
			}
			return v, p.lit("}")
		}
	case c == '[':
		p.pos++
		v := trace.Value{Kind: trace.Array, Items: []trace.Value{}}
		if p.lit("]") {
			return v, true
		}
		for {
			it, ok := p.value(depth + 1)
			if !ok {
				return v, false
			}
			v.Items = append(v.Items, it)
			if p.lit(", ") {
				continue
			}
			return v, p.lit("]")
		}
	case c == '\'' || c == '"':
		s, ok := p.str()
		return trace.StringValue(s), ok
	case c == 'T':
		return trace.BoolValue(true), p.lit("True")
	case c == 'F':
		return trace.BoolValue(false), p.lit("False")
	case c == 'N':
		return trace.NullValue(), p.lit("None")
	case c == '-' || (c >= '0' && c <= '9'):
		n := numberLen(p.s[p.pos:])
		if n == 0 {
			return trace.Value{}, false
		}
		v := trace.NumberValue(p.s[p.pos : p.pos+n])
		p.pos += n
		return v, true
	}
	return trace.Value{}, false
}

// str reads a Python string literal (no prefixes, no implicit concatenation).
func (p *pyParser) str() (string, bool) {
	q := p.s[p.pos]
	p.pos++
	var b []byte
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		switch {
		case c == q:
			p.pos++
			return string(b), utf8.Valid(b)
		case c == '\n':
			return "", false
		case c != '\\':
			b = append(b, c)
			p.pos++
			continue
		}
		if p.pos+1 >= len(p.s) {
			return "", false
		}
		e := p.s[p.pos+1]
		p.pos += 2
		hex := func(n int) bool {
			if p.pos+n > len(p.s) {
				return false
			}
			var r rune
			for i := 0; i < n; i++ {
				h := hexVal(p.s[p.pos+i])
				if h < 0 {
					return false
				}
				r = r<<4 | rune(h)
			}
			if r > unicode.MaxRune || (r >= 0xD800 && r < 0xE000) {
				return false
			}
			p.pos += n
			b = utf8.AppendRune(b, r)
			return true
		}
		switch e {
		case '\\', '\'', '"':
			b = append(b, e)
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'x':
			if !hex(2) {
				return "", false
			}
		case 'u':
			if !hex(4) {
				return "", false
			}
		case 'U':
			if !hex(8) {
				return "", false
			}
		default:
			return "", false
		}
	}
	return "", false
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// appendPyRepr writes v as Python's repr writes the equivalent dict, list, str, int,
// float, bool or None.
func appendPyRepr(dst []byte, v *trace.Value) []byte {
	switch v.Kind {
	case trace.Null:
		return append(dst, "None"...)
	case trace.Bool:
		if v.Str == "true" {
			return append(dst, "True"...)
		}
		return append(dst, "False"...)
	case trace.Number:
		return append(dst, v.Str...)
	case trace.String:
		return appendPyStr(dst, v.Str)
	case trace.Array:
		dst = append(dst, '[')
		for i := range v.Items {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendPyRepr(dst, &v.Items[i])
		}
		return append(dst, ']')
	case trace.Object:
		dst = append(dst, '{')
		for i := range v.Members {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendPyStr(dst, v.Members[i].Key)
			dst = append(dst, ": "...)
			dst = appendPyRepr(dst, &v.Members[i].Value)
		}
		return append(dst, '}')
	}
	return dst
}

// appendPyStr writes s as Python's repr of a str: single quotes unless s has a single
// quote and no double one; \\, the quote, \n \r \t escaped; other unprintable characters
// as \xhh, \uhhhh or \Uhhhhhhhh.
func appendPyStr(dst []byte, s string) []byte {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	dst = append(dst, q)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\\' || r == rune(q):
			dst = append(dst, '\\', byte(r))
		case r == '\n':
			dst = append(dst, '\\', 'n')
		case r == '\r':
			dst = append(dst, '\\', 'r')
		case r == '\t':
			dst = append(dst, '\\', 't')
		case r == utf8.RuneError && n == 1:
			dst = append(dst, "\uFFFD"...) // not reachable from parsed text
		case r < 0x7f && r >= 0x20:
			dst = append(dst, byte(r))
		case r < 0x100 && !(r >= 0xA0 && unicode.IsPrint(r)):
			dst = append(dst, '\\', 'x', hexDigits[r>>4], hexDigits[r&0xF])
		case unicode.IsPrint(r):
			dst = append(dst, s[i:i+n]...)
		case r < 0x10000:
			dst = appendU4(dst, r)
		default:
			dst = append(dst, '\\', 'U')
			for sh := 28; sh >= 0; sh -= 4 {
				dst = append(dst, hexDigits[r>>uint(sh)&0xF])
			}
		}
		i += n
	}
	return append(dst, q)
}
