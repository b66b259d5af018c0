// Package http is the room server's HTTP/JSON edge: it maps routes onto parley.RoomService,
// bearer tokens onto callers, and parley's error codes onto HTTP statuses in one table.
//
// What it guarantees to clients:
//
//   - Every error is JSON, {"error": {"code", "message", "hint"}} with the error's extra
//     fields ("seq", "diagnostics", "retry_after") at the top level, also for unknown routes
//     and wrong methods. Internal errors say "internal error"; their detail goes to the log.
//   - History is served as the service renders it, byte for byte: the same range gives the
//     same bytes, ETag and cache headers to every reader, so provider prompt caches hit.
//   - Reads (history, messages, inbox, state, the event stream) and the UI's text are gzipped
//     for a client that sends Accept-Encoding: gzip, with Vary: Accept-Encoding; they
//     decompress to the same bytes, and the gzip representation has its own ETag (see
//     compress.go).
//   - Request bodies, headers and slow clients are capped (see NewHTTPServer).
//   - GET /openapi.json describes every route (openapi.json, OpenAPI 3.1); openapi_test.go
//     fails when a route is missing from it or a real answer does not match it.
//
// The web UI ("/") and the MCP endpoint ("/mcp") are mounted by their own packages with
// Server.Handle.
package http

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/forwarded"
	"github.com/parleyhq/parley/internal/metrics"
	"github.com/parleyhq/parley/internal/redact"
)

// Body caps. A message's own cap comes from its room's policy and is checked by the service;
// the reader cap only stops a client from streaming an unbounded body at us. Policies allow
// at most 1 MiB per message, so 1 MiB plus room for JSON framing never refuses a legal post.
const (
	maxBodyBytes    = 1<<20 + 64<<10
	maxRunBodyBytes = 16 << 20 // `go test -json` output and JUnit XML of a large suite
)

// statusOf is the one table from parley's error codes to HTTP statuses. EINVALID from the
// service means the request was read and its content is invalid (422); a request this
// package cannot read at all is a malformed request (400, see badRequest).
var statusOf = map[string]int{
	parley.EINVALID:      http.StatusUnprocessableEntity,
	parley.EUNAUTHORIZED: http.StatusUnauthorized,
	parley.EFORBIDDEN:    http.StatusForbidden,
	parley.ENOTFOUND:     http.StatusNotFound,
	parley.ECONFLICT:     http.StatusConflict,
	parley.ETOOLARGE:     http.StatusRequestEntityTooLarge,
	parley.ERATELIMIT:    http.StatusTooManyRequests,
	parley.ESTORAGEFULL:  http.StatusInsufficientStorage,
	parley.EINTERNAL:     http.StatusInternalServerError,
}

// malformed marks an error about the request's framing (bad JSON, bad query parameter), as
// opposed to its content: 400 rather than 422.
type malformed struct{ err *parley.Error }

func (m malformed) Error() string { return m.err.Error() }
func (m malformed) Unwrap() error { return m.err }

// badRequest returns a 400 error with a hint on how to form the request.
func badRequest(hint, format string, args ...any) error {
	e := parley.Errorf(parley.EINVALID, format, args...)
	e.Hint = hint
	return malformed{e}
}

// Server is the HTTP handler of the room server.
type Server struct {
	svc       parley.RoomService
	log       *slog.Logger
	mux       *http.ServeMux
	fallback  http.Handler // "/" when a UI is mounted; JSON 404 otherwise
	metrics   *metrics.Metrics
	heartbeat time.Duration
	inboxText func(*parley.Inbox) string
	stateText func(*parley.StateRecord) string
	gzPages   *gzipPages // the gzip of full history pages
	proxies   *forwarded.Trusted

	closeOnce sync.Once
	closing   chan struct{} // closed by CloseStreams
}

// Option configures a Server.
type Option func(*Server)

// WithLogger sets the logger for request logs and internal errors (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(s *Server) { s.log = l } }

// WithRenderer sets how inboxes and state records are rendered as convention text (the
// server passes room.Renderer{}, as it does to the MCP edge). Without one those routes
// answer JSON only.
func WithRenderer(r parley.Renderer) Option {
	return func(s *Server) { s.inboxText, s.stateText = r.InboxText, r.StateText }
}

// WithRenderers is WithRenderer with the two renderers passed as functions.
//
// Deprecated: use WithRenderer(room.Renderer{}).
func WithRenderers(inbox func(*parley.Inbox) string, state func(*parley.StateRecord) string) Option {
	return func(s *Server) { s.inboxText, s.stateText = inbox, state }
}

// WithTrustedProxies believes X-Forwarded-For and X-Forwarded-Proto on connections from
// these networks (package forwarded): the request log then records the client's address,
// with the proxy's beside it, and the web UI's cookie is Secure for a client on HTTPS. From
// any other address the headers are dropped. Without it they are dropped from everyone.
func WithTrustedProxies(t *forwarded.Trusted) Option { return func(s *Server) { s.proxies = t } }

// WithHeartbeat sets how often an idle event stream gets a comment line, which keeps
// proxies from closing it (default 15s).
func WithHeartbeat(d time.Duration) Option { return func(s *Server) { s.heartbeat = d } }

// NewServer returns the handler serving svc's HTTP API.
func NewServer(svc parley.RoomService, opts ...Option) *Server {
	s := &Server{
		svc:       svc,
		log:       slog.Default(),
		mux:       http.NewServeMux(),
		heartbeat: 15 * time.Second,
		closing:   make(chan struct{}),
		gzPages:   newGzipPages(gzipPagesBudget),
	}
	for _, o := range opts {
		o(s)
	}
	if s.metrics == nil {
		s.metrics = metrics.New()
	}
	s.countRooms()
	s.routes()
	return s
}

func (s *Server) routes() {
	m := s.mux
	m.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	m.Handle("GET /metrics", s.metricsHandler())
	m.HandleFunc("GET /openapi.json", handleOpenAPI)

	m.HandleFunc("POST /v1/rooms", s.api(s.handleCreateRoom))
	m.HandleFunc("GET /v1/rooms", s.api(s.handleRooms))
	m.HandleFunc("GET /v1/rooms/{room}", s.api(s.handleRoom))
	m.HandleFunc("PATCH /v1/rooms/{room}", s.api(s.handleUpdatePolicy))

	m.HandleFunc("POST /v1/rooms/{room}/seats", s.api(s.handleAddSeat))
	m.HandleFunc("GET /v1/rooms/{room}/seats", s.api(s.handleSeats))
	m.HandleFunc("DELETE /v1/rooms/{room}/seats/{seat}", s.api(s.handleRevokeSeat))
	m.HandleFunc("POST /v1/rooms/{room}/seats/{seat}/rotate", s.api(s.handleRotateSeat))

	m.HandleFunc("POST /v1/rooms/{room}/messages", s.api(s.handlePost))
	m.HandleFunc("GET /v1/rooms/{room}/history", s.api(s.compressed(s.handleHistory)))
	m.HandleFunc("GET /v1/rooms/{room}/messages", s.api(s.compressed(s.handleMessages)))
	m.HandleFunc("GET /v1/rooms/{room}/events", s.api(s.compressed(s.handleEvents)))
	m.HandleFunc("GET /v1/rooms/{room}/inbox", s.api(s.compressed(s.handleInbox)))
	m.HandleFunc("GET /v1/rooms/{room}/state/{topic}", s.api(s.compressed(s.handleState)))
	m.HandleFunc("GET /v1/rooms/{room}/search", s.api(s.compressed(s.handleSearch)))
	m.HandleFunc("POST /v1/rooms/{room}/runs", s.api(s.handleRun))
	m.HandleFunc("GET /v1/rooms/{room}/stats", s.api(s.handleStats))
	m.HandleFunc("POST /v1/rooms/{room}/lint", s.api(s.handleLint))
	m.HandleFunc("GET /v1/rooms/{room}/export", s.api(s.handleExport))
	m.HandleFunc("POST /v1/rooms/import", s.api(s.handleImport))

	// Unknown API routes stay JSON even when a UI owns "/".
	m.HandleFunc("/v1/", s.handleUnknown)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if s.fallback != nil {
			s.fallback.ServeHTTP(w, r)
			return
		}
		s.handleUnknown(w, r)
	})
}

// Handle mounts another edge on the server: the MCP endpoint ("/mcp"), the web UI ("/"). A
// handler for "/" receives every request no other pattern matches, except under /v1/.
// Request logging and metrics cover mounted handlers too, and the "/" handler's text
// responses are gzipped for clients that accept it (see compressedHandler). Handle must be
// called before the server starts serving.
func (s *Server) Handle(pattern string, h http.Handler) {
	if pattern == "/" {
		s.fallback = compressedHandler(h)
		return
	}
	s.mux.Handle(pattern, h)
}

// CloseStreams ends every open event stream and makes new ones end at once. An event
// stream never goes idle, so http.Server.Shutdown would wait on it until its deadline;
// register this with http.Server.RegisterOnShutdown.
func (s *Server) CloseStreams() { s.closeOnce.Do(func() { close(s.closing) }) }

// ServeHTTP logs the request, counts it, and recovers a panicking handler into a JSON 500.
// The log never holds a credential: query values named like one (token, access_token, auth,
// key…) and any path segment or value of a token's shape are logged as REDACTED.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	r = s.proxies.Apply(r)
	// The recorder and the log's request info in one allocation.
	st := &served{}
	rec, info := &st.rec, &st.info
	rec.ResponseWriter, rec.info = w, info
	// Deferred first so it runs last: after the request is counted, and even when the
	// deferred function below re-raises an aborted handler's panic.
	defer func() {
		if rec.streamEnd != nil {
			rec.streamEnd()
		}
	}()
	// A response that turns out to be an event stream (the API's, the UI's live transcript,
	// MCP's) counts as open until the handler returns.
	rec.srv, rec.req = s, r
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("handler panic", "method", r.Method, "path", redact.Path(r.URL.Path), "panic", redact.String(fmt.Sprint(v)), "stack", string(debug.Stack()))
			if !rec.wroteHeader {
				s.writeError(rec, r, fmt.Errorf("panic: %v", v))
			}
		}
		d := time.Since(start)
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		route := r.Pattern
		if route == "" {
			route = "unmatched"
		}
		s.metrics.Request(route, status, d)
		level := slog.LevelInfo
		if r.URL.Path == "/healthz" || r.URL.Path == "/metrics" {
			level = slog.LevelDebug
		}
		var buf [10]slog.Attr // all of them, on the stack
		attrs := append(buf[:0],
			slog.String("method", r.Method),
			slog.String("path", redact.Path(r.URL.Path)),
			slog.Int("status", status),
			slog.Int64("bytes", rec.bytes),
			slog.Duration("duration", d),
			slog.String("remote", r.RemoteAddr),
		)
		if p := forwarded.Proxy(r); p != "" {
			attrs = append(attrs, slog.String("proxy", p))
		}
		if r.URL.RawQuery != "" {
			attrs = append(attrs, slog.String("query", redact.Query(r.URL.RawQuery)))
		}
		if info.seat != "" {
			attrs = append(attrs, slog.String("seat", info.seat))
		}
		if info.code != "" {
			attrs = append(attrs, slog.String("error", info.code))
		}
		s.logRequest(r.Context(), level, attrs)
	}()
	s.mux.ServeHTTP(rec, r)
}

// logRequest writes the request log's line as s.log.LogAttrs(ctx, level, "request", attrs...)
// would, save the cost of asking the runtime for the caller on every request: the line's
// source, for a handler that adds one, is the logging function's, found once.
func (s *Server) logRequest(ctx context.Context, level slog.Level, attrs []slog.Attr) {
	if !s.log.Enabled(ctx, level) {
		return
	}
	pc := requestLogPC.Load()
	if pc == 0 {
		var pcs [1]uintptr
		runtime.Callers(1, pcs[:]) // this function, as LogAttrs would name its caller
		pc = pcs[0]
		requestLogPC.Store(pc)
	}
	rec := slog.NewRecord(time.Now(), level, "request", pc)
	rec.AddAttrs(attrs...)
	// As LogAttrs does, a handler's error is dropped. (Called as a method expression: the
	// route test reads every two-argument .Handle call in this package as a route.)
	_ = slog.Handler.Handle(s.log.Handler(), ctx, rec)
}

// requestLogPC is the program counter logRequest gives its records (0 until the first).
var requestLogPC atomic.Uintptr

// requestInfo collects, for the request log, what handlers learn: who called and how it
// failed.
type requestInfo struct {
	seat string
	code string
}

// served is what ServeHTTP keeps of one request.
type served struct {
	rec  recorder
	info requestInfo
}

// infoOf finds the request's info through w, the recorder ServeHTTP made or a writer that
// wraps it (Unwrap), without a context value (a copy of the request) per request.
func infoOf(w http.ResponseWriter) *requestInfo {
	for {
		switch x := w.(type) {
		case *recorder:
			if x.info != nil {
				return x.info
			}
			return &requestInfo{}
		case interface{ Unwrap() http.ResponseWriter }:
			w = x.Unwrap()
		default:
			return &requestInfo{} // a handler called outside ServeHTTP (tests)
		}
	}
}

// recorder remembers the status and size of a response for the log and metrics. Unwrap lets
// http.ResponseController reach the connection (flushes and deadlines for event streams).
type recorder struct {
	http.ResponseWriter
	status      int
	bytes       int64
	wroteHeader bool
	// When the header says text/event-stream, srv's metrics count a stream of req's route
	// open, until streamEnd (what they returned) is called.
	srv       *Server
	req       *http.Request
	streamEnd func()
	info      *requestInfo // what the request log learns from handlers (infoOf)
}

// begin notes the status the response starts with, and whether it is an event stream.
func (r *recorder) begin(code int) {
	if r.wroteHeader {
		return
	}
	r.status, r.wroteHeader = code, true
	if code == http.StatusOK && r.srv != nil &&
		strings.HasPrefix(r.Header().Get("Content-Type"), "text/event-stream") {
		r.streamEnd = r.srv.metrics.StreamOpened(streamEdge(r.req.Pattern))
	}
}

func (r *recorder) WriteHeader(code int) {
	if code >= 200 { // 1xx headers are informational; the real status follows
		r.begin(code)
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.begin(http.StatusOK)
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

func (r *recorder) Flush() {
	r.begin(http.StatusOK)
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// apiHandler is an authenticated API handler: it gets the caller and returns an error that
// the wrapper writes.
type apiHandler func(w http.ResponseWriter, r *http.Request, c *parley.Caller) error

// api authenticates the bearer token and writes the handler's error, if any.
func (s *Server) api(h apiHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, err := s.authenticate(w, r)
		if err == nil {
			err = h(w, r, c)
		}
		if err != nil {
			s.writeError(w, r, err)
		}
	}
}

func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (*parley.Caller, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return nil, parley.Errorf(parley.EUNAUTHORIZED, "no bearer token").
			WithHint("send the seat's token as 'Authorization: Bearer <token>'")
	}
	scheme, token, ok := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return nil, parley.Errorf(parley.EUNAUTHORIZED, "the Authorization header is not a bearer token").
			WithHint("send the seat's token as 'Authorization: Bearer <token>'")
	}
	c, err := s.svc.Authenticate(r.Context(), token)
	if err != nil {
		return nil, err
	}
	info := infoOf(w)
	switch {
	case c.Seat != nil:
		info.seat = c.Seat.Room + "/" + c.Seat.Name
	case c.Admin:
		info.seat = "admin"
	}
	return c, nil
}

// errorBody is the JSON shape of every error response.
type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
}

// writeError maps err through statusOf and writes it as JSON. The detail of an internal
// error is logged, never sent.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	code := parley.ErrorCode(err)
	status, ok := statusOf[code]
	if !ok {
		status, code = http.StatusInternalServerError, parley.EINTERNAL
	}
	var m malformed
	if errors.As(err, &m) {
		status = http.StatusBadRequest
	}
	infoOf(w).code = code

	out := map[string]any{}
	body := errorBody{Code: code, Message: "internal error"}
	var pe *parley.Error
	if code == parley.EINTERNAL {
		s.log.Error("internal error", "method", r.Method, "path", redact.Path(r.URL.Path), "err", redact.String(err.Error()))
	} else if errors.As(err, &pe) {
		body.Message, body.Hint = pe.Message, pe.Hint
		for k, v := range pe.Fields {
			if k != "error" {
				out[k] = v
			}
		}
	}
	out["error"] = body

	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="parley"`)
	}
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(out["retry_after"])))
	}
	writeJSON(w, status, out)
}

// retryAfterSeconds turns the service's retry_after (seconds, any number type) into the
// whole seconds Retry-After needs, rounded up so a client that waits exactly that long
// gets through.
func retryAfterSeconds(v any) int {
	var f float64
	switch x := v.(type) {
	case int:
		f = float64(x)
	case int64:
		f = float64(x)
	case float64:
		f = x
	case time.Duration:
		f = x.Seconds()
	case json.Number:
		f, _ = x.Float64()
	}
	return max(1, int(math.Ceil(f)))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	buf := jsonBufs.Get().(*bytes.Buffer)
	defer putJSONBuf(buf)
	buf.Reset()
	// Encode writes what json.Marshal returns and a newline.
	if err := json.NewEncoder(buf).Encode(v); err != nil {
		// Only our own types reach here; a failure is a programming error.
		buf.Reset()
		buf.WriteString(`{"error":{"code":"internal","message":"internal error"}}` + "\n")
		status = http.StatusInternalServerError
	}
	h := w.Header()
	h["Content-Type"] = contentTypeJSON
	h["Content-Length"] = contentLength(buf.Len())
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// smallLengths are the Content-Length values of answers under 1 KiB (most answers: a post's,
// an error), made once and shared as contentTypeJSON is, so that an answer allocates no
// header value of its own.
var smallLengths = sync.OnceValue(func() [][]string {
	v := make([][]string, 1024)
	for n := range v {
		v[n] = []string{strconv.Itoa(n)}
	}
	return v
})

// contentLength is the Content-Length header value for an n-byte body.
func contentLength(n int) []string {
	if n < 1024 {
		return smallLengths()[n]
	}
	return []string{strconv.Itoa(n)}
}

// contentTypeJSON is the Content-Type of every JSON answer, one slice for all of them (a
// header's values are replaced, never written to, by net/http and this package).
var contentTypeJSON = []string{"application/json"}

// jsonBufs holds the buffers JSON answers are encoded in.
var jsonBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putJSONBuf returns a buffer to the pool, unless one large answer grew it.
func putJSONBuf(b *bytes.Buffer) {
	if b.Cap() <= 64<<10 {
		jsonBufs.Put(b)
	}
}

// handleUnknown answers a path no route matches: 405 with Allow when the path exists under
// another method, 404 otherwise.
func (s *Server) handleUnknown(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{"GET", "POST", "PATCH", "DELETE"} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pat := s.mux.Handler(probe); pat != "" && pat != "/" && pat != "/v1/" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		infoOf(w).code = "method_not_allowed"
		writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"error": errorBody{
			Code:    "method_not_allowed",
			Message: fmt.Sprintf("%s is not allowed on %s", r.Method, r.URL.Path),
			Hint:    "use " + strings.Join(allow, " or "),
		}})
		return
	}
	s.writeError(w, r, parley.Errorf(parley.ENOTFOUND, "no route %s %s", r.Method, r.URL.Path).
		WithHint("the API lives under /v1/rooms; GET /openapi.json describes every route"))
}

// readBody reads a capped request body; a body over the cap is ETOOLARGE.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, parley.Errorf(parley.ETOOLARGE, "the request body is over %d bytes", limit)
		}
		return nil, badRequest("resend the request", "reading the request body: %v", err)
	}
	closeRead(r)
	return b, nil
}

// closeRead closes a request body read to its end. net/http keeps the connection for the
// next request either way, but a body left open is drained first when the answer's header
// is written (an io.CopyN and its reader, on every post).
func closeRead(r *http.Request) { r.Body.Close() }

// decodeJSON reads a capped JSON body into v, refusing unknown fields so that a misspelt
// field is an error rather than silently ignored.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	b, err := readBody(w, r, maxBodyBytes)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("send a JSON object in the request body", "the request body is not valid JSON for this route: %v", err)
	}
	if dec.More() {
		return badRequest("send exactly one JSON object", "the request body has data after its JSON object")
	}
	return nil
}

// queryInt64 parses an optional non-negative integer query parameter.
func queryInt64(r *http.Request, name string, def int64) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, badRequest(fmt.Sprintf("give %s as a whole number, 0 or more", name), "query parameter %s=%q is not a non-negative integer", name, v)
	}
	return n, nil
}

// wantsJSON reports whether the client asked for JSON rather than the convention text.
func wantsJSON(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(mt), "application/json") {
			return true
		}
	}
	return false
}

func writeText(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(text)))
	w.WriteHeader(status)
	w.Write([]byte(text))
}
