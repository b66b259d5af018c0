// Package postjson writes the HTTP answer to a post, {"seq","tokens","notes","warnings"},
// as encoding/json writes it (HTML escaping on, as json.Encoder and json.Marshal do), without
// reflection: every post answers with one. It is its own package so that its fuzz target,
// which holds it to encoding/json, builds without the HTTP edge's dependencies.
package postjson

import (
	"encoding/json"
	"strconv"

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

// AppendString appends json.Marshal(s) to dst: a string of printable ASCII that
// encoding/json writes as it is (no quote, backslash, or the <, > and & it escapes for HTML)
// is quoted here; any other goes through json.Marshal, so that every escape is its.
func AppendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // a string always marshals
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
