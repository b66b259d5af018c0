// The compact value notation: JSON values with bare keys and strings where unambiguous,
// the escapes of raw and quoted text, and strings that hold JSON written as %X.

package a2c

import (
	"maps"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parleyhq/parley/trace"
)

// appendEscaped writes s with backslash escapes for \, the quote byte q, line breaks,
// tabs, other control characters, U+2028/U+2029 and lone surrogates.
func appendEscaped(dst []byte, s string, q byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x80 {
			switch {
			case c == '\\' || c == q:
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
			case c < 0x20 || c == 0x7f:
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
		switch {
		case r == utf8.RuneError && n == 1:
			dst = append(dst, "\uFFFD"...)
		case r == '\u2028' || r == '\u2029' || r < 0xA0: // and the C1 controls: the payload stays printable
			dst = appendU4(dst, r)
		default:
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return dst
}

func appendQuotedCVN(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = appendEscaped(dst, s, '"')
	return append(dst, '"')
}

// value writes a JSON value in the compact value notation.
func (e *Encoder) value(dst []byte, v *trace.Value) []byte {
	switch v.Kind {
	case trace.Null:
		return append(dst, "null"...)
	case trace.Bool, trace.Number:
		return append(dst, v.Str...)
	case trace.String:
		return e.str(dst, v.Str)
	case trace.Array:
		dst = append(dst, '[')
		for i := range v.Items {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = e.value(dst, &v.Items[i])
		}
		return append(dst, ']')
	case trace.Object:
		dst = append(dst, '{')
		for i := range v.Members {
			if i > 0 {
				dst = append(dst, ',')
			}
			k := v.Members[i].Key
			if e.opt.Bare && bareKey(k) {
				e.feat.Bare = true
				dst = append(dst, k...)
			} else {
				dst = appendQuotedCVN(dst, k)
			}
			dst = append(dst, ':')
			dst = e.value(dst, &v.Members[i].Value)
		}
		return append(dst, '}')
	}
	return dst
}

func (e *Encoder) str(dst []byte, s string) []byte {
	bare := e.opt.Bare && bareValue(s)
	if ref, ok := e.refFor(s, func() int {
		if bare {
			return e.count(s)
		}
		return e.count(`"` + s + `"`)
	}); ok {
		e.feat.ValueRefs = true
		return append(dst, ref...)
	}
	if e.opt.Embedded {
		if v, st, cut, ok := detectEmbedded(s, e.buf); ok && !(cut > 0 && e.opt.noCut) && strings.IndexByte(e.opt.offStyles, st.tag) < 0 {
			if out, ok := e.tryEmbedded(dst, s, &v, st, cut, func() int { return e.count(`"` + s + `"`) }); ok {
				return out
			}
		}
	}
	switch {
	case bare:
		e.feat.Bare = true
		dst = append(dst, s...)
	case e.opt.Bare && strings.Count(s, `"`) > strings.Count(s, "'"):
		// Text full of double quotes (JSON cut short, HTML) reads and tokenizes better
		// between single quotes than with every " escaped.
		e.feat.Quotes = true
		dst = append(dst, '\'')
		dst = appendEscaped(dst, s, '\'')
		dst = append(dst, '\'')
	default:
		dst = appendQuotedCVN(dst, s)
	}
	e.st.register(s)
	return dst
}

// tryEmbedded writes a string that holds JSON as %X, the cut if any, and the value. With
// TokenAligned it first checks that this costs fewer tokens than the string as text, and
// if not, undoes what writing it did (strings numbered, features noted) and reports false.
func (e *Encoder) tryEmbedded(dst []byte, s string, v *trace.Value, st *style, cut int, literalCost func() int) ([]byte, bool) {
	savedFeat, savedStyles, savedStrs := e.feat, maps.Clone(e.feat.Styles), len(e.st.strList)
	start := len(dst)
	dst = append(dst, '%', st.tag)
	if cut > 0 {
		dst = strconv.AppendInt(dst, int64(cut), 10)
	}
	e.embDepth++
	dst = e.value(dst, v)
	e.embDepth--
	if e.opt.TokenAligned && e.opt.Counter != nil && e.opt.Counter.Count(string(dst[start:])) >= literalCost() {
		e.feat = savedFeat
		e.feat.Styles = savedStyles
		for _, x := range e.st.strList[savedStrs:] {
			delete(e.st.strs, x)
		}
		e.st.strList = e.st.strList[:savedStrs]
		return dst[:start], false
	}
	e.feat.Styles[st.tag] = true
	if cut > 0 {
		e.feat.Cut = true
	}
	e.st.register(s)
	if e.embDepth == 0 {
		e.pending = append(e.pending, s)
	}
	return dst, true
}

// bareKey reports whether an object key can go without quotes: it cannot be mistaken
// for the structure around it.
func bareKey(k string) bool {
	if k == "" || k[0] == ' ' || k[len(k)-1] == ' ' || k[0] == '"' || k[0] == '\'' {
		return false
	}
	for i := 0; i < len(k); i++ {
		switch c := k[i]; {
		case c < 0x20 || c == 0x7f:
			return false
		case c == '"' || c == '\\' || c == ',' || c == ':' || c == '{' || c == '}' || c == '[' || c == ']' || c == '|':
			return false
		case c >= 0x80:
			if _, ok := trace.Surrogate(k, i); ok {
				return false
			}
			r, n := utf8.DecodeRuneInString(k[i:])
			if (r == utf8.RuneError && n == 1) || r == '\u2028' || r == '\u2029' || r < 0xA0 {
				return false
			}
		}
	}
	return true
}

// bareValue reports whether a string value can go without quotes: a bare key that does
// not start like another value (number, reference, embedded JSON, absent marker) and is
// not a JSON keyword.
func bareValue(s string) bool {
	if !bareKey(s) {
		return false
	}
	switch c := s[0]; {
	case c == '-' || (c >= '0' && c <= '9') || c == '$' || c == '%' || c == '~':
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			return false
		}
	}
	return s != "true" && s != "false" && s != "null"
}
