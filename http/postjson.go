package http

import (
	"bytes"
	"net/http"

	"github.com/parleyhq/parley/internal/postjson"
)

// writePost writes a post's answer as writeJSON would, the same bytes (TestPostJSON and
// postjson's FuzzAppend hold it to encoding/json), without encoding/json's reflection: every
// post answers with one.
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
	return postjson.Append(dst, out.Seq, out.Tokens, out.Notes, out.Warnings)
}
