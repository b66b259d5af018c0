// Package toon encodes JSON values as TOON, Token-Oriented Object Notation, following the
// TOON specification v3.0. parley uses it as one of the formats the benchmarks compare with
// JSON, prose and the room convention.
//
// TOON writes the JSON data model by indentation instead of braces:
//
//	message_type: status_report           an object field: key, colon, one space, value
//	task:                                 a nested object: its fields one level deeper
//	  endpoint: POST /api/search
//	headers[1]: Retry-After               an array of primitives, inline, with its length
//	users[2]{id,name}:                    an array of uniform flat objects: a table whose
//	  1,Ada                                 field names are written once
//	  2,Linus
//	items[2]:                             any other array: one "- " item per line
//	  - plain
//	  - id: 7                             an object item: first field on the hyphen line,
//	    tags[0]:                            the rest one level deeper
//
// Strings are quoted only when a reader could take them for something else (empty, padded
// with spaces, true/false/null, number-like, starting with a hyphen, or holding a colon,
// quote, backslash, bracket, brace, control character or the delimiter); quoted strings use
// only the escapes \\ \" \n \r \t. Numbers are written in canonical decimal form: no
// exponent, no leading zeros, no trailing fractional zeros, -0 as 0. Object fields keep the
// order they were given in, which is why ParseJSON decodes into an ordered Object.
//
// The encoder guarantees: the output is deterministic for a given input; lines are joined by
// LF with no trailing newline and no trailing spaces; indentation is spaces only, a multiple
// of the indent size; no string value ever spans two lines. Optional features of the spec
// that change the data's shape (key folding) are not implemented.
package toon

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Delimiter separates the values of inline arrays and table rows.
type Delimiter byte

// The three delimiters the spec allows. Comma is the default and is not written in headers.
const (
	Comma Delimiter = ','
	Tab   Delimiter = '\t'
	Pipe  Delimiter = '|'
)

// Options tune the encoder. The zero value means two-space indentation and comma delimiters.
type Options struct {
	// Indent is the number of spaces per nesting level; 0 means 2.
	Indent int
	// Delimiter is used for every array in the document; 0 means Comma.
	Delimiter Delimiter
}

// Encode returns the TOON text of v with default options. v is a value as ParseJSON returns
// it (Object, []any, string, json.Number, bool, nil); map[string]any (written in sorted key
// order, since a map has none of its own), []any, other Go numbers and ints are accepted too.
// Non-finite floats become null, as the spec requires.
func Encode(v any) (string, error) {
	return EncodeOptions(v, Options{})
}

// EncodeOptions is Encode with explicit options.
func EncodeOptions(v any, opts Options) (string, error) {
	if opts.Indent == 0 {
		opts.Indent = 2
	}
	if opts.Indent < 0 || opts.Indent > 16 {
		return "", fmt.Errorf("toon: indent %d out of range 1..16", opts.Indent)
	}
	switch opts.Delimiter {
	case 0:
		opts.Delimiter = Comma
	case Comma, Tab, Pipe:
	default:
		return "", fmt.Errorf("toon: delimiter %q is not comma, tab or pipe", rune(opts.Delimiter))
	}
	n, err := normalize(v, 0)
	if err != nil {
		return "", err
	}
	e := &encoder{indent: opts.Indent, delim: byte(opts.Delimiter)}
	e.root(n)
	return e.b.String(), nil
}

// FromJSON parses JSON text with ParseJSON and encodes it with default options.
func FromJSON(data []byte) (string, error) {
	v, err := ParseJSON(data)
	if err != nil {
		return "", err
	}
	return Encode(v)
}

// number is a number already in canonical TOON form.
type number string

// normalize maps v onto the JSON data model the encoder walks: Object, []any, string,
// number, bool and nil. Doing it once up front keeps the layout code free of type switches
// and reports unsupported values before any output is produced.
func normalize(v any, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("toon: nesting deeper than %d", maxDepth)
	}
	switch t := v.(type) {
	case nil:
		return nil, nil
	case bool, string:
		return t, nil
	case json.Number:
		c, err := canonicalNumber(string(t))
		if err != nil {
			return nil, err
		}
		return number(c), nil
	case float64:
		return floatNumber(t, 64)
	case float32:
		return floatNumber(float64(t), 32)
	case int:
		return number(strconv.FormatInt(int64(t), 10)), nil
	case int8, int16, int32, int64:
		return number(strconv.FormatInt(reflect.ValueOf(t).Int(), 10)), nil
	case uint, uint8, uint16, uint32, uint64, uintptr:
		return number(strconv.FormatUint(reflect.ValueOf(t).Uint(), 10)), nil
	case Object:
		out := make(Object, len(t))
		for i, m := range t {
			nv, err := normalize(m.Value, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = Member{Key: m.Key, Value: nv}
		}
		return out, nil
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make(Object, len(keys))
		for i, k := range keys {
			nv, err := normalize(t[k], depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = Member{Key: k, Value: nv}
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			nv, err := normalize(x, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = nv
		}
		return out, nil
	}
	return nil, fmt.Errorf("toon: cannot encode a value of type %T", v)
}

func floatNumber(f float64, bits int) (any, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, nil
	}
	// The shortest representation that round-trips, then the same canonicalisation as
	// json.Number so that 1e21 and 1.5e-7 come out in plain decimal.
	c, err := canonicalNumber(strconv.FormatFloat(f, 'g', -1, bits))
	if err != nil {
		return nil, err
	}
	return number(c), nil
}

// maxNumberLen bounds the expansion of exponents: "1e999999" is valid JSON but its plain
// decimal form would be a megabyte of zeros.
const maxNumberLen = 400

// ErrNumberTooLong is returned for numbers whose canonical decimal form would be longer than
// the encoder accepts (a huge or tiny exponent).
var ErrNumberTooLong = errors.New("toon: number too long in plain decimal form")

// canonicalNumber rewrites a JSON number in TOON's canonical decimal form without going
// through float64, so no digit is ever lost.
func canonicalNumber(s string) (string, error) {
	orig := s
	bad := func() (string, error) { return "", fmt.Errorf("toon: %q is not a number", orig) }
	neg := false
	if strings.HasPrefix(s, "-") {
		neg = true
		s = s[1:]
	}
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	intPart := s[:i]
	if intPart == "" {
		return bad()
	}
	s = s[i:]
	fracPart := ""
	if strings.HasPrefix(s, ".") {
		j := 1
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		fracPart = s[1:j]
		if fracPart == "" {
			return bad()
		}
		s = s[j:]
	}
	exp := 0
	if s != "" {
		if s[0] != 'e' && s[0] != 'E' {
			return bad()
		}
		es := s[1:]
		sign := ""
		if strings.HasPrefix(es, "+") || strings.HasPrefix(es, "-") {
			sign, es = es[:1], es[1:]
		}
		if es == "" || !allDigits(es) {
			return bad()
		}
		e, err := strconv.Atoi(sign + es)
		if err != nil || e > maxNumberLen*4 || e < -maxNumberLen*4 {
			return "", fmt.Errorf("%w: %q", ErrNumberTooLong, orig)
		}
		exp = e
	}
	// digits holds every significant digit; point is where the decimal point falls,
	// counted from the left of digits.
	digits := intPart + fracPart
	point := len(intPart) + exp
	lead := 0
	for lead < len(digits) && digits[lead] == '0' {
		lead++
	}
	digits = digits[lead:]
	point -= lead
	digits = strings.TrimRight(digits, "0")
	if digits == "" {
		return "0", nil // covers -0, 0.000 and 0e5
	}
	width := len(digits)
	if point > width {
		width = point
	}
	if point < 0 {
		width += -point + 1
	}
	if width > maxNumberLen {
		return "", fmt.Errorf("%w: %q", ErrNumberTooLong, orig)
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	switch {
	case point <= 0:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -point))
		b.WriteString(digits)
	case point >= len(digits):
		b.WriteString(digits)
		b.WriteString(strings.Repeat("0", point-len(digits)))
	default:
		b.WriteString(digits[:point])
		b.WriteByte('.')
		b.WriteString(digits[point:])
	}
	return b.String(), nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// needsQuotes reports whether a string value must be quoted in a context whose delimiter is
// delim (spec §7.2).
func needsQuotes(s string, delim byte) bool {
	if s == "" || s == "true" || s == "false" || s == "null" {
		return true
	}
	first, _ := utf8.DecodeRuneInString(s)
	last, _ := utf8.DecodeLastRuneInString(s)
	if isPadding(first) || isPadding(last) {
		return true
	}
	if s[0] == '-' || numberLike(s) {
		return true
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ':', '"', '\\', '[', ']', '{', '}', '\n', '\r', '\t':
			return true
		default:
			if c == delim {
				return true
			}
		}
	}
	return false
}

// isPadding is the whitespace a decoder would trim from around a token. U+FEFF is included
// because common trim functions (JavaScript's among them) remove it.
func isPadding(r rune) bool {
	return unicode.IsSpace(r) || r == '\uFEFF'
}

// numberLike reports whether an unquoted s would be read back as a number: the spec's
// /^-?\d+(?:\.\d+)?(?:e[+-]?\d+)?$/i, or a leading-zero run like 05 that some decoders take
// for an octal or decimal number. A leading plus (+1) is included too, beyond the v3.0
// rule: decoders that hand tokens to their host's number parser read it as a number.
func numberLike(s string) bool {
	if len(s) > 1 && s[0] == '0' && allDigits(s[1:]) {
		return true
	}
	if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
		s = s[1:]
	}
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i == 0 {
		return false
	}
	s = s[i:]
	if strings.HasPrefix(s, ".") {
		j := 1
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j == 1 {
			return false
		}
		s = s[j:]
	}
	if s == "" {
		return true
	}
	if s[0] != 'e' && s[0] != 'E' {
		return false
	}
	s = s[1:]
	if strings.HasPrefix(s, "+") || strings.HasPrefix(s, "-") {
		s = s[1:]
	}
	return s != "" && allDigits(s)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// quote writes s as a quoted TOON string with the five escapes the spec allows.
func quote(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}

// validKey reports whether a key may be written unquoted: ^[A-Za-z_][A-Za-z0-9_.]*$.
func validKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z':
		case i > 0 && (isDigit(c) || c == '.'):
		default:
			return false
		}
	}
	return true
}
