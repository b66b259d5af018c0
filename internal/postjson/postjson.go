// Package postjson writes the HTTP answer to a post, {"seq","tokens","notes","warnings"},
// as encoding/json writes it (HTML escaping on, as json.Encoder and json.Marshal do), without
// reflection: every post answers with one. It is its own package so that its fuzz target,
// which holds it to encoding/json, builds without the HTTP edge's dependencies.
package postjson

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/parleyhq/parley/diag"
)

// Append appends the JSON object {"seq":seq,"tokens":tokens,"notes":notes,"warnings":warnings}
// to dst, as json.Marshal writes a struct of those four fields in that order. notes and
// warnings must not be nil (a nil list would be null in encoding/json).
func Append(dst []byte, seq int64, tokens int, notes []string, warnings []diag.Diagnostic) []byte {
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendInt(dst, seq, 10)
	dst = append(dst, `,"tokens":`...)
	dst = strconv.AppendInt(dst, int64(tokens), 10)
	dst = append(dst, `,"notes":[`...)
	for i, n := range notes {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, n)
	}
	dst = append(dst, `],"warnings":[`...)
	for i, d := range warnings {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendDiagnostic(dst, d)
	}
	return append(dst, "]}"...)
}

// AppendDiagnostic appends json.Marshal(d) to dst (Fix and More are left out when empty).
func AppendDiagnostic(dst []byte, d diag.Diagnostic) []byte {
	dst = append(dst, `{"line":`...)
	dst = strconv.AppendInt(dst, int64(d.Line), 10)
	dst = append(dst, `,"col":`...)
	dst = strconv.AppendInt(dst, int64(d.Col), 10)
	dst = append(dst, `,"severity":`...)
	dst = AppendString(dst, d.Severity)
	dst = append(dst, `,"code":`...)
	dst = AppendString(dst, d.Code)
	dst = append(dst, `,"message":`...)
	dst = AppendString(dst, d.Message)
	if d.Fix != "" {
		dst = append(dst, `,"fix":`...)
		dst = AppendString(dst, d.Fix)
	}
	if d.More != 0 {
		dst = append(dst, `,"more":`...)
		dst = strconv.AppendInt(dst, int64(d.More), 10)
	}
	return append(dst, '}')
}

// AppendString appends json.Marshal(s) to dst: a string encoding/json writes as it is
// (Plain) is quoted here; any other goes through json.Marshal, so that every escape is its.
func AppendString(dst []byte, s string) []byte {
	if !Plain(s) {
		b, _ := json.Marshal(s) // a string always marshals
		return append(dst, b...)
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// Plain tells whether encoding/json writes s between its quotes as it is: valid UTF-8
// without control characters, '"', '\\', the characters it escapes for HTML ('<', '>', '&'),
// U+2028 or U+2029.
func Plain(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			return false
		}
		i += size
	}
	return true
}
