package trace

import (
	"fmt"
	"sort"
	"strconv"
	"unicode/utf8"
)

// ValueKind says which of JSON's six kinds a Value holds.
type ValueKind uint8

// The JSON kinds. Numbers keep their source token, so a Value never rounds.
const (
	Null ValueKind = iota
	Bool
	Number
	String
	Array
	Object
)

// Value is a parsed JSON value that keeps what encoding/json would lose: numbers as the
// exact token written in the source (1000.0, -0, 1e400 and 12345678901234567890 stay as
// they are), object members in source order (duplicates included), and lone UTF-16
// surrogates (held as WTF-8 bytes so that they are written back as the same \u escape).
type Value struct {
	Kind    ValueKind
	Str     string   // String: the decoded text; Number: the token; Bool: "true" or "false"
	Items   []Value  // Array
	Members []Member // Object, in source order
}

// Member is one name/value pair of an object.
type Member struct {
	Key   string
	Value Value
}

// Convenience constructors, used by the adapters and tests.

// StringValue returns a JSON string.
func StringValue(s string) Value { return Value{Kind: String, Str: s} }

// NumberValue returns a JSON number from its token; the token is not checked here.
func NumberValue(tok string) Value { return Value{Kind: Number, Str: tok} }

// BoolValue returns true or false.
func BoolValue(b bool) Value {
	if b {
		return Value{Kind: Bool, Str: "true"}
	}
	return Value{Kind: Bool, Str: "false"}
}

// NullValue returns null.
func NullValue() Value { return Value{Kind: Null} }

// Get returns the value of the first member named key, if v is an object.
func (v *Value) Get(key string) (*Value, bool) {
	if v == nil || v.Kind != Object {
		return nil, false
	}
	for i := range v.Members {
		if v.Members[i].Key == key {
			return &v.Members[i].Value, true
		}
	}
	return nil, false
}

// SyntaxError is a JSON parse error with the byte offset where it was found.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("json: offset %d: %s", e.Offset, e.Msg) }

// maxDepth bounds nesting so that hostile input cannot exhaust the stack.
const maxDepth = 10000

// ParseJSON parses exactly one JSON value (RFC 8259) surrounded by optional whitespace.
// Raw bytes that are not UTF-8 are replaced by U+FFFD, the one change parsing makes.
func ParseJSON(data []byte) (Value, error) {
	p := parser{data: data}
	p.skipSpace()
	v, err := p.value(0)
	if err != nil {
		return Value{}, err
	}
	p.skipSpace()
	if p.pos != len(p.data) {
		return Value{}, p.errorf("unexpected %q after the value", p.data[p.pos])
	}
	return v, nil
}

// ParseJSONPrefix parses one JSON value at the start of data (after whitespace) and
// returns the number of bytes consumed; used to read concatenated or line-delimited JSON.
func ParseJSONPrefix(data []byte) (Value, int, error) {
	p := parser{data: data}
	p.skipSpace()
	v, err := p.value(0)
	return v, p.pos, err
}

type parser struct {
	data []byte
	pos  int
	buf  []byte
}

func (p *parser) errorf(format string, args ...any) error {
	return &SyntaxError{Offset: p.pos, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (Value, error) {
	if depth > maxDepth {
		return Value{}, p.errorf("nesting deeper than %d", maxDepth)
	}
	if p.pos >= len(p.data) {
		return Value{}, p.errorf("unexpected end of input")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		p.pos++
		v := Value{Kind: Object}
		p.skipSpace()
		if p.pos < len(p.data) && p.data[p.pos] == '}' {
			p.pos++
			v.Members = []Member{}
			return v, nil
		}
		for {
			p.skipSpace()
			if p.pos >= len(p.data) || p.data[p.pos] != '"' {
				return Value{}, p.errorf("expected a member name")
			}
			k, err := p.str()
			if err != nil {
				return Value{}, err
			}
			p.skipSpace()
			if p.pos >= len(p.data) || p.data[p.pos] != ':' {
				return Value{}, p.errorf("expected ':' after a member name")
			}
			p.pos++
			p.skipSpace()
			m, err := p.value(depth + 1)
			if err != nil {
				return Value{}, err
			}
			v.Members = append(v.Members, Member{Key: k, Value: m})
			p.skipSpace()
			if p.pos >= len(p.data) {
				return Value{}, p.errorf("unexpected end of input in an object")
			}
			if p.data[p.pos] == ',' {
				p.pos++
				continue
			}
			if p.data[p.pos] == '}' {
				p.pos++
				return v, nil
			}
			return Value{}, p.errorf("expected ',' or '}' in an object")
		}
	case c == '[':
		p.pos++
		v := Value{Kind: Array, Items: []Value{}}
		p.skipSpace()
		if p.pos < len(p.data) && p.data[p.pos] == ']' {
			p.pos++
			return v, nil
		}
		for {
			p.skipSpace()
			it, err := p.value(depth + 1)
			if err != nil {
				return Value{}, err
			}
			v.Items = append(v.Items, it)
			p.skipSpace()
			if p.pos >= len(p.data) {
				return Value{}, p.errorf("unexpected end of input in an array")
			}
			if p.data[p.pos] == ',' {
				p.pos++
				continue
			}
			if p.data[p.pos] == ']' {
				p.pos++
				return v, nil
			}
			return Value{}, p.errorf("expected ',' or ']' in an array")
		}
	case c == '"':
		s, err := p.str()
		if err != nil {
			return Value{}, err
		}
		return Value{Kind: String, Str: s}, nil
	case c == 't':
		return p.literal("true", Value{Kind: Bool, Str: "true"})
	case c == 'f':
		return p.literal("false", Value{Kind: Bool, Str: "false"})
	case c == 'n':
		return p.literal("null", Value{Kind: Null})
	case c == '-' || (c >= '0' && c <= '9'):
		n := NumberLen(p.data[p.pos:])
		if n == 0 {
			return Value{}, p.errorf("malformed number")
		}
		v := Value{Kind: Number, Str: string(p.data[p.pos : p.pos+n])}
		p.pos += n
		return v, nil
	default:
		return Value{}, p.errorf("unexpected %q", c)
	}
}

func (p *parser) literal(word string, v Value) (Value, error) {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return Value{}, p.errorf("expected %s", word)
	}
	p.pos += len(word)
	return v, nil
}

// NumberLen returns the length of the JSON number token at the start of b, or 0 if b
// does not start with one.
func NumberLen(b []byte) int {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return 0
	}
	if b[i] == '0' {
		i++
	} else if b[i] >= '1' && b[i] <= '9' {
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	} else {
		return 0
	}
	if i < len(b) && b[i] == '.' {
		i++
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return 0
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return 0
		}
	}
	return i
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

func (p *parser) hex4(at int) (rune, bool) {
	if at+4 > len(p.data) {
		return 0, false
	}
	var r rune
	for i := 0; i < 4; i++ {
		h := hexVal(p.data[at+i])
		if h < 0 {
			return 0, false
		}
		r = r<<4 | rune(h)
	}
	return r, true
}

// str reads a string literal starting at the opening quote.
func (p *parser) str() (string, error) {
	p.pos++ // opening quote
	start := p.pos
	// Fast path: no escapes, ASCII or valid UTF-8.
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		if c == '"' {
			s := p.data[start:p.pos]
			p.pos++
			if utf8.Valid(s) {
				return string(s), nil
			}
			return string([]rune(string(s))), nil // invalid bytes become U+FFFD
		}
		if c == '\\' || c < 0x20 {
			break
		}
		p.pos++
	}
	p.buf = append(p.buf[:0], p.data[start:p.pos]...)
	for {
		if p.pos >= len(p.data) {
			return "", p.errorf("unterminated string")
		}
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			if utf8.Valid(p.buf) {
				return string(p.buf), nil
			}
			return fixUTF8(p.buf), nil
		case c < 0x20:
			return "", p.errorf("control character %#x in a string", c)
		case c == '\\':
			if p.pos+1 >= len(p.data) {
				return "", p.errorf("unterminated escape")
			}
			e := p.data[p.pos+1]
			p.pos += 2
			switch e {
			case '"', '\\', '/':
				p.buf = append(p.buf, e)
			case 'b':
				p.buf = append(p.buf, '\b')
			case 'f':
				p.buf = append(p.buf, '\f')
			case 'n':
				p.buf = append(p.buf, '\n')
			case 'r':
				p.buf = append(p.buf, '\r')
			case 't':
				p.buf = append(p.buf, '\t')
			case 'u':
				r, ok := p.hex4(p.pos)
				if !ok {
					return "", p.errorf("malformed \\u escape")
				}
				p.pos += 4
				if r >= 0xD800 && r < 0xDC00 && p.pos+6 <= len(p.data) && p.data[p.pos] == '\\' && p.data[p.pos+1] == 'u' {
					if r2, ok := p.hex4(p.pos + 2); ok && r2 >= 0xDC00 && r2 < 0xE000 {
						p.pos += 6
						p.buf = utf8.AppendRune(p.buf, (r-0xD800)<<10|(r2-0xDC00)+0x10000)
						continue
					}
				}
				if r >= 0xD800 && r < 0xE000 {
					p.buf = appendSurrogate(p.buf, r)
				} else {
					p.buf = utf8.AppendRune(p.buf, r)
				}
			default:
				return "", p.errorf("unknown escape \\%c", e)
			}
		default:
			p.buf = append(p.buf, c)
			p.pos++
		}
	}
}

// appendSurrogate writes a lone surrogate code unit as its three WTF-8 bytes.
func appendSurrogate(b []byte, r rune) []byte {
	return append(b, 0xED, byte(0x80|(r>>6)&0x3F), byte(0x80|r&0x3F))
}

// Surrogate reports whether s[i:] starts with a WTF-8 encoded lone surrogate, and its value.
func Surrogate(s string, i int) (rune, bool) {
	if i+2 < len(s) && s[i] == 0xED && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2] >= 0x80 && s[i+2] <= 0xBF {
		return 0xD000 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F), true
	}
	return 0, false
}

// fixUTF8 keeps WTF-8 surrogates and replaces every other invalid byte with U+FFFD.
func fixUTF8(b []byte) string {
	s := string(b)
	out := make([]byte, 0, len(b)+8)
	for i := 0; i < len(s); {
		if _, ok := Surrogate(s, i); ok {
			out = append(out, s[i:i+3]...)
			i += 3
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			out = append(out, "\uFFFD"...)
		} else {
			out = append(out, s[i:i+n]...)
		}
		i += n
	}
	return string(out)
}

// AppendCanonical appends the canonical JSON of v: object members sorted by the bytes of
// their names (stable, so duplicate names keep their order), no whitespace, numbers as
// their token, strings with the fewest escapes (", \, \b \f \n \r \t, \u00XX for other
// control characters, \u2028 and \u2029, \uXXXX for lone surrogates; everything else raw
// UTF-8).
func AppendCanonical(dst []byte, v *Value) []byte {
	switch v.Kind {
	case Null:
		return append(dst, "null"...)
	case Bool, Number:
		return append(dst, v.Str...)
	case String:
		return AppendQuoted(dst, v.Str)
	case Array:
		dst = append(dst, '[')
		for i := range v.Items {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendCanonical(dst, &v.Items[i])
		}
		return append(dst, ']')
	case Object:
		dst = append(dst, '{')
		for n, i := range sortedMembers(v.Members) {
			if n > 0 {
				dst = append(dst, ',')
			}
			dst = AppendQuoted(dst, v.Members[i].Key)
			dst = append(dst, ':')
			dst = AppendCanonical(dst, &v.Members[i].Value)
		}
		return append(dst, '}')
	}
	panic("trace: bad value kind " + strconv.Itoa(int(v.Kind)))
}

// sortedMembers returns the member indexes in canonical order.
func sortedMembers(ms []Member) []int {
	idx := make([]int, len(ms))
	sorted := true
	for i := range ms {
		idx[i] = i
		if i > 0 && ms[i-1].Key > ms[i].Key {
			sorted = false
		}
	}
	if !sorted {
		sort.SliceStable(idx, func(a, b int) bool { return ms[idx[a]].Key < ms[idx[b]].Key })
	}
	return idx
}

// Canonical returns the canonical JSON of v.
func Canonical(v *Value) []byte { return AppendCanonical(nil, v) }

const hexDigits = "0123456789abcdef"

// AppendQuoted appends s as a canonical JSON string literal.
func AppendQuoted(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < 0x80 {
			i++
			continue
		}
		if c < 0x80 {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		if r, ok := Surrogate(s, i); ok {
			dst = append(dst, s[start:i]...)
			dst = appendU(dst, r)
			i += 3
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == '\u2028' || r == '\u2029' || (r == utf8.RuneError && n == 1) {
			dst = append(dst, s[start:i]...)
			if n == 1 {
				dst = append(dst, "\uFFFD"...)
			} else {
				dst = appendU(dst, r)
			}
			i += n
			start = i
			continue
		}
		i += n
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func appendU(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', hexDigits[r>>12&0xF], hexDigits[r>>8&0xF], hexDigits[r>>4&0xF], hexDigits[r&0xF])
}
