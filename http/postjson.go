package http

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/parleyhq/parley"
)

// writePost writes a post's answer as writeJSON would (the same bytes: FuzzPostJSON holds
// appendPostJSON to encoding/json), without the reflection of encoding/json: every post
// answers with one.
func writePost(w http.ResponseWriter, status int, out postResponse) {
	buf := jsonBufs.Get().(*bytes.Buffer)
	defer putJSONBuf(buf)
	buf.Reset()
	b := appendPostJSON(buf.AvailableBuffer(), out)
	buf.Write(append(b, '\n'))
	h := w.Header()
	h["Content-Type"] = contentTypeJSON
	h["Content-Length"] = contentLength(buf.Len())
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// appendPostJSON appends json.Marshal(out) to dst. Notes and Warnings must not be nil (the
// handler makes them empty lists).
func appendPostJSON(dst []byte, out postResponse) []byte {
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendInt(dst, out.Seq, 10)
	dst = append(dst, `,"tokens":`...)
	dst = strconv.AppendInt(dst, int64(out.Tokens), 10)
	dst = append(dst, `,"notes":[`...)
	for i, n := range out.Notes {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, n)
	}
	dst = append(dst, `],"warnings":[`...)
	for i, d := range out.Warnings {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendDiagnostic(dst, d)
	}
	return append(dst, "]}"...)
}

// appendDiagnostic appends json.Marshal(d) to dst (Fix and More are left out when empty).
func appendDiagnostic(dst []byte, d parley.Diagnostic) []byte {
	dst = append(dst, `{"line":`...)
	dst = strconv.AppendInt(dst, int64(d.Line), 10)
	dst = append(dst, `,"col":`...)
	dst = strconv.AppendInt(dst, int64(d.Col), 10)
	dst = append(dst, `,"severity":`...)
	dst = appendJSONString(dst, d.Severity)
	dst = append(dst, `,"code":`...)
	dst = appendJSONString(dst, d.Code)
	dst = append(dst, `,"message":`...)
	dst = appendJSONString(dst, d.Message)
	if d.Fix != "" {
		dst = append(dst, `,"fix":`...)
		dst = appendJSONString(dst, d.Fix)
	}
	if d.More != 0 {
		dst = append(dst, `,"more":`...)
		dst = strconv.AppendInt(dst, int64(d.More), 10)
	}
	return append(dst, '}')
}

// appendJSONString appends json.Marshal(s) to dst: a string of printable ASCII that
// encoding/json writes as it is (no quote, backslash, or the <, > and & it escapes for HTML)
// is quoted here; any other goes through json.Marshal, so that every escape is its.
func appendJSONString(dst []byte, s string) []byte {
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
