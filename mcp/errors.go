package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/parleyhq/parley"
)

// Every refusal on /mcp is the server's one JSON error shape, as on the HTTP API:
// {"error":{"code","message","hint"}}. The endpoint's own refusals (host, origin, token) are
// written so; the SDK's (an unknown session, a wrong Accept header) are plain text from
// http.Error and are rewritten by jsonErrors, keeping their status and message. Results of
// JSON-RPC calls, errors included, are JSON-RPC and left alone.

type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Hint    string `json:"hint,omitempty"`
	} `json:"error"`
}

// writeError writes the JSON error shape with status.
func writeError(w http.ResponseWriter, status int, code, msg, hint string) {
	var e errorBody
	e.Error.Code, e.Error.Message, e.Error.Hint = code, msg, hint
	b, _ := json.Marshal(e)
	h := w.Header()
	h.Del("Content-Length")
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// codeOf is the parley error code for an HTTP status the SDK answers with.
func codeOf(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return parley.EUNAUTHORIZED
	case http.StatusForbidden:
		return parley.EFORBIDDEN
	case http.StatusNotFound:
		return parley.ENOTFOUND
	case http.StatusConflict:
		return parley.ECONFLICT
	case http.StatusRequestEntityTooLarge:
		return parley.ETOOLARGE
	case http.StatusTooManyRequests:
		return parley.ERATELIMIT
	case http.StatusInsufficientStorage:
		return parley.ESTORAGEFULL
	}
	if status >= 500 {
		return parley.EINTERNAL
	}
	return parley.EINVALID
}

// hintFor says what to do about an SDK refusal, by status.
func hintFor(status int) string {
	switch status {
	case http.StatusNotFound:
		return "the MCP session ended (server restart, idle timeout, or its token was rotated): start a new session with initialize"
	case http.StatusForbidden:
		return "a session belongs to the seat whose token opened it"
	case http.StatusMethodNotAllowed:
		return "/mcp takes POST (calls), GET (the session's event stream) and DELETE (end a session)"
	case http.StatusUnsupportedMediaType, http.StatusBadRequest:
		return "speak MCP's streamable HTTP transport: POST JSON-RPC with `Content-Type: application/json` and `Accept: application/json, text/event-stream`"
	}
	return ""
}

// jsonErrors rewrites plain-text error responses of next into the JSON error shape.
func jsonErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		jw := &jsonErrorWriter{ResponseWriter: w}
		next.ServeHTTP(jw, r)
		jw.finish()
	})
}

// jsonErrorWriter holds back a plain-text error response (status ≥ 400 with a text/plain
// Content-Type, as http.Error writes) and writes it as JSON when the handler returns; any
// other response passes straight through.
type jsonErrorWriter struct {
	http.ResponseWriter
	status  int // the held-back error status; 0 when passing through
	started bool
	msg     bytes.Buffer
}

func (w *jsonErrorWriter) WriteHeader(code int) {
	if !w.started && code >= 400 && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.started, w.status = true, code
		return
	}
	if code >= 200 {
		w.started = true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *jsonErrorWriter) Write(b []byte) (int, error) {
	if !w.started {
		w.WriteHeader(http.StatusOK)
	}
	if w.status != 0 {
		if w.msg.Len() < 4<<10 {
			w.msg.Write(b)
		}
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

func (w *jsonErrorWriter) Flush() {
	if w.status != 0 {
		return
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *jsonErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *jsonErrorWriter) finish() {
	if w.status == 0 {
		return
	}
	msg := strings.TrimSpace(w.msg.String())
	if msg == "" {
		msg = strings.ToLower(http.StatusText(w.status))
	}
	writeError(w.ResponseWriter, w.status, codeOf(w.status), msg, hintFor(w.status))
}

// describeRefusal turns an error response of /mcp into one line for a person: the JSON
// error's message and hint, or the body as it is when it is not that shape (a proxy's page).
func describeRefusal(status string, body []byte) string {
	var e errorBody
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		s := fmt.Sprintf("%s: %s: %s", status, e.Error.Code, e.Error.Message)
		if e.Error.Hint != "" {
			s += " (hint: " + e.Error.Hint + ")"
		}
		return s
	}
	return fmt.Sprintf("%s: %s", status, strings.TrimSpace(string(body)))
}
