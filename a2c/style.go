package a2c

import (
	"strings"
	"unicode/utf8"

	"github.com/parleyhq/parley/trace"
)

// A style is a way JSON text is commonly written by the programs that produce tool
// arguments and results. A string holding JSON is re-read only when writing the parsed
// value back in one of these styles reproduces it byte for byte.
type style struct {
	tag    byte
	comma  string // after an object member (before a newline when indent > 0)
	icomma string // after an array item; "" means the same as comma
	colon  string
	indent int  // spaces per level
	nl     bool // a newline before each item and closing bracket even when indent is 0
	ascii  bool // non-ASCII as \uXXXX (Python's ensure_ascii)
	py     bool // Python's repr instead of JSON (see pyrepr.go)
	desc   string
}

var styles = []style{
	{tag: 'j', comma: ",", colon: ":", desc: "compact"},
	{tag: 'a', comma: ",", colon: ":", ascii: true, desc: "compact, ASCII"},
	{tag: 'p', comma: ", ", colon: ": ", ascii: true, desc: "Python json.dumps"},
	{tag: 'u', comma: ", ", colon: ": ", desc: "json.dumps, UTF-8"},
	{tag: 'm', comma: ",", icomma: ", ", colon: ":", desc: `compact, ", " in arrays`},
	{tag: 'n', comma: ",", icomma: ", ", colon: ":", ascii: true, desc: `compact, ", " in arrays, ASCII`},
	{tag: 'z', comma: ",", colon: ": ", nl: true, ascii: true, desc: "indent 0, ASCII"},
	{tag: 'y', comma: ",", colon: ": ", nl: true, desc: "indent 0, UTF-8"},
	{tag: 'i', comma: ",", colon: ": ", indent: 2, ascii: true, desc: "indent 2, ASCII"},
	{tag: 'k', comma: ",", colon: ": ", indent: 2, desc: "indent 2, UTF-8"},
	{tag: 'I', comma: ",", colon: ": ", indent: 4, ascii: true, desc: "indent 4, ASCII"},
	{tag: 'K', comma: ",", colon: ": ", indent: 4, desc: "indent 4, UTF-8"},
	{tag: 'P', py: true, desc: "Python repr"},
}

func styleByTag(t byte) *style {
	for i := range styles {
		if styles[i].tag == t {
			return &styles[i]
		}
	}
	return nil
}

// appendStyled writes v (members in their own order) in style st.
func appendStyled(dst []byte, v *trace.Value, st *style, depth int) []byte {
	if st.py {
		return appendPyRepr(dst, v)
	}
	switch v.Kind {
	case trace.Null:
		return append(dst, "null"...)
	case trace.Bool, trace.Number:
		return append(dst, v.Str...)
	case trace.String:
		return appendStyledString(dst, v.Str, st.ascii)
	case trace.Array:
		if len(v.Items) == 0 {
			return append(dst, "[]"...)
		}
		dst = append(dst, '[')
		comma := st.comma
		if st.icomma != "" {
			comma = st.icomma
		}
		for i := range v.Items {
			if i > 0 {
				dst = append(dst, comma...)
			}
			dst = newline(dst, st, depth+1)
			dst = appendStyled(dst, &v.Items[i], st, depth+1)
		}
		dst = newline(dst, st, depth)
		return append(dst, ']')
	case trace.Object:
		if len(v.Members) == 0 {
			return append(dst, "{}"...)
		}
		dst = append(dst, '{')
		for i := range v.Members {
			if i > 0 {
				dst = append(dst, st.comma...)
			}
			dst = newline(dst, st, depth+1)
			dst = appendStyledString(dst, v.Members[i].Key, st.ascii)
			dst = append(dst, st.colon...)
			dst = appendStyled(dst, &v.Members[i].Value, st, depth+1)
		}
		dst = newline(dst, st, depth)
		return append(dst, '}')
	}
	return dst
}

func newline(dst []byte, st *style, depth int) []byte {
	if st.indent == 0 && !st.nl {
		return dst
	}
	dst = append(dst, '\n')
	for i := 0; i < depth*st.indent; i++ {
		dst = append(dst, ' ')
	}
	return dst
}

const hexDigits = "0123456789abcdef"

// appendStyledString writes s the way Python's json and JavaScript's JSON.stringify do:
// \" \\ \b \f \n \r \t, \u00XX for other control characters, lone surrogates as \uXXXX,
// and with ascii every non-ASCII character as \uXXXX (surrogate pairs above U+FFFF).
func appendStyledString(dst []byte, s string, ascii bool) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x80 {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c == '\b':
				dst = append(dst, '\\', 'b')
			case c == '\f':
				dst = append(dst, '\\', 'f')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		if r, ok := trace.Surrogate(s, i); ok {
			dst = appendU4(dst, r)
			i += 3
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			r = utf8.RuneError
		}
		if ascii {
			if r >= 0x10000 {
				r -= 0x10000
				dst = appendU4(dst, 0xD800+(r>>10))
				dst = appendU4(dst, 0xDC00+(r&0x3FF))
			} else {
				dst = appendU4(dst, r)
			}
		} else if n == 1 {
			dst = append(dst, "\uFFFD"...)
		} else {
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return append(dst, '"')
}

func appendU4(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', hexDigits[r>>12&0xF], hexDigits[r>>8&0xF], hexDigits[r>>4&0xF], hexDigits[r&0xF])
}

// detectEmbedded returns the parsed value and style of a string that holds a JSON object
// or array written in one of the styles, byte for byte. cut > 0 means the string is such
// JSON cut short (tools often truncate long results): writing the value gives the string
// followed by cut more bytes, the closing quote and brackets the cut removed.
func detectEmbedded(s string, scratch []byte) (v trace.Value, st *style, cut int, ok bool) {
	// Short strings are cheaper as they are than behind a style tag.
	if len(s) < 8 || (s[0] != '{' && s[0] != '[') {
		return trace.Value{}, nil, 0, false
	}
	last := s[len(s)-1]
	if (s[0] == '{' && last == '}') || (s[0] == '[' && last == ']') {
		v, err := trace.ParseJSON([]byte(s))
		if err == nil {
			st, ok := matchStyle(&v, s, scratch)
			return v, st, 0, ok
		}
		if strings.IndexByte(s, '\'') >= 0 || strings.Contains(s, "True") || strings.Contains(s, "False") || strings.Contains(s, "None") {
			if pv, ok := parsePyRepr(s); ok && string(appendPyRepr(scratch[:0], &pv)) == s {
				return pv, styleByTag('P'), 0, true
			}
		}
	}
	closers, ok := closeJSON(s)
	if !ok || closers == "" || len(s) < 32 {
		return trace.Value{}, nil, 0, false
	}
	full := s + closers
	v, err := trace.ParseJSON([]byte(full))
	if err != nil {
		return trace.Value{}, nil, 0, false
	}
	st, ok = matchStyle(&v, full, scratch)
	return v, st, len(closers), ok
}

// closeJSON returns what would close a JSON text cut short: the open string's quote and
// the open brackets, innermost first. ok is false when the cut falls inside an escape.
func closeJSON(s string) (string, bool) {
	var stack []byte
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if in {
			switch c {
			case '\\':
				if i+1 == len(s) {
					return "", false
				}
				i++
			case '"':
				in = false
			}
			continue
		}
		switch c {
		case '"':
			in = true
		case '{':
			stack = append(stack, '}')
		case '[':
			stack = append(stack, ']')
		case '}', ']':
			if len(stack) == 0 || stack[len(stack)-1] != c {
				return "", false
			}
			stack = stack[:len(stack)-1]
		}
	}
	var b []byte
	if in {
		b = append(b, '"')
	}
	for i := len(stack) - 1; i >= 0; i-- {
		b = append(b, stack[i])
	}
	return string(b), true
}

// matchStyle finds the JSON style that writes v as exactly target.
func matchStyle(v *trace.Value, target string, scratch []byte) (*style, bool) {
	nonASCII := false
	multiline := false
	for i := 0; i < len(target); i++ {
		if target[i] >= 0x80 {
			nonASCII = true
		}
		if target[i] == '\n' {
			multiline = true
		}
	}
	for i := range styles {
		st := &styles[i]
		if st.py || (st.indent > 0 || st.nl) != multiline || (st.ascii && nonASCII) {
			continue
		}
		scratch = appendStyled(scratch[:0], v, st, 0)
		if string(scratch) == target {
			return st, true
		}
	}
	return nil, false
}
