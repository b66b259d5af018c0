package http_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	phttp "github.com/parleyhq/parley/http"
	"github.com/parleyhq/parley/internal/lockedbuf"
	"github.com/parleyhq/parley/internal/mock"
	"github.com/parleyhq/parley/internal/textline"
)

// authOnly is a mock whose tokens are "admin" (the server's admin) and "<room>.<seat>".
func authOnly() *mock.RoomService {
	return &mock.RoomService{
		AuthenticateFn: func(ctx context.Context, token string) (*parley.Caller, error) {
			if token == "admin" {
				return &parley.Caller{Admin: true}, nil
			}
			room, seat, ok := strings.Cut(token, ".")
			if !ok {
				return nil, parley.Errorf(parley.EUNAUTHORIZED, "unknown token")
			}
			return &parley.Caller{Seat: &parley.Seat{Room: room, Name: seat, Role: parley.RoleAgent}}, nil
		},
	}
}

func newServer(t *testing.T, svc parley.RoomService, opts ...phttp.Option) (*httptest.Server, *lockedbuf.Buffer) {
	t.Helper()
	logs := &lockedbuf.Buffer{}
	opts = append([]phttp.Option{phttp.WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))}, opts...)
	ts := httptest.NewServer(phttp.NewServer(svc, opts...))
	t.Cleanup(ts.Close)
	return ts, logs
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, r.body)
	}
	return m
}

func do(t *testing.T, ts *httptest.Server, method, path, token, body string, headers ...string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, ts.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, b}
}

// TestPostErrors checks the one table from error code to status, and the error body, for
// every error the post pipeline returns.
func TestPostErrors(t *testing.T) {
	diags := []parley.Diagnostic{{Line: 1, Col: 28, Severity: "error", Code: "count", Message: "n=10 but the message has 9 fact lines"}}
	tests := []struct {
		name       string
		err        error
		status     int
		code       string
		message    string
		extraKey   string
		retryAfter string
	}{
		{"validation", (&parley.Error{Code: parley.EINVALID, Message: "the message is not valid"}).With("diagnostics", diags), 422, "invalid", "the message is not valid", "diagnostics", ""},
		{"repeat", parley.Errorf(parley.ECONFLICT, "you already posted this").WithHint("see #3").With("seq", int64(3)), 409, "conflict", "you already posted this", "seq", ""},
		{"rate", parley.Errorf(parley.ERATELIMIT, "over 30 messages a minute").With("retry_after", 1.2), 429, "rate_limited", "over 30 messages a minute", "retry_after", "2"},
		{"rate whole", parley.Errorf(parley.ERATELIMIT, "over").With("retry_after", 7), 429, "rate_limited", "over", "retry_after", "7"},
		{"too large", parley.Errorf(parley.ETOOLARGE, "over 65536 bytes"), 413, "too_large", "over 65536 bytes", "", ""},
		{"forbidden", parley.Errorf(parley.EFORBIDDEN, "not your room"), 403, "forbidden", "not your room", "", ""},
		{"not found", parley.Errorf(parley.ENOTFOUND, "no room x"), 404, "not_found", "no room x", "", ""},
		{"unauthorized", parley.Errorf(parley.EUNAUTHORIZED, "revoked"), 401, "unauthorized", "revoked", "", ""},
		{"storage full", parley.StorageFull(), 507, "storage_full", parley.StorageFull().Message, "", ""},
		{"internal", fmt.Errorf("disk on fire at /var/secret"), 500, "internal", "internal error", "", ""},
		{"internal code", parley.Errorf(parley.EINTERNAL, "sql: detail that must stay in the log"), 500, "internal", "internal error", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := authOnly()
			svc.PostFn = func(ctx context.Context, c *parley.Caller, room string, body []byte, key string) (*parley.PostResult, error) {
				return nil, tt.err
			}
			ts, logs := newServer(t, svc)
			r := do(t, ts, "POST", "/v1/rooms/r/messages", "r.lead", "v1 note x to all n=0\n")
			if r.status != tt.status {
				t.Fatalf("status = %d, want %d; body %s", r.status, tt.status, r.body)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			m := r.json(t)
			e, _ := m["error"].(map[string]any)
			if e["code"] != tt.code || e["message"] != tt.message {
				t.Errorf("error = %v, want code %q message %q", e, tt.code, tt.message)
			}
			if tt.extraKey != "" && m[tt.extraKey] == nil {
				t.Errorf("body lacks %q at top level: %s", tt.extraKey, r.body)
			}
			if got := r.header.Get("Retry-After"); got != tt.retryAfter {
				t.Errorf("Retry-After = %q, want %q", got, tt.retryAfter)
			}
			if tt.status == 500 {
				if bytes.Contains(r.body, []byte("disk")) || bytes.Contains(r.body, []byte("sql")) {
					t.Errorf("internal detail leaked: %s", r.body)
				}
				if !strings.Contains(logs.String(), "internal error") {
					t.Errorf("internal error not logged:\n%s", logs)
				}
			}
			if tt.status == 401 && r.header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}
}

func TestPostCreatedAndReplay(t *testing.T) {
	svc := authOnly()
	var gotBody, gotKey, gotSeat string
	svc.PostFn = func(ctx context.Context, c *parley.Caller, room string, body []byte, key string) (*parley.PostResult, error) {
		gotBody, gotKey, gotSeat = string(body), key, c.Seat.Name
		return &parley.PostResult{Seq: 4, Tokens: 12, Replay: key == "again"}, nil
	}
	ts, _ := newServer(t, svc)
	body := "v1 note limiter to all n=1\noutcome fine\n"
	r := do(t, ts, "POST", "/v1/rooms/r/messages", "r.builder", body, "Idempotency-Key", "k1")
	if r.status != 201 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	if gotBody != body || gotKey != "k1" || gotSeat != "builder" {
		t.Errorf("service got body %q key %q seat %q", gotBody, gotKey, gotSeat)
	}
	if got := strings.TrimSpace(string(r.body)); got != `{"seq":4,"tokens":12,"notes":[],"warnings":[]}` {
		t.Errorf("body = %s", got)
	}
	r = do(t, ts, "POST", "/v1/rooms/r/messages", "r.builder", body, "Idempotency-Key", "again")
	if r.status != 200 || r.json(t)["seq"] != 4.0 {
		t.Errorf("replay: status %d body %s", r.status, r.body)
	}
}

func TestRequestErrors(t *testing.T) {
	svc := authOnly()
	svc.CreateRoomFn = func(ctx context.Context, c *parley.Caller, name string, p *parley.Policy) (*parley.Room, error) {
		return &parley.Room{Name: name}, nil
	}
	svc.HistoryFn = func(ctx context.Context, c *parley.Caller, room string, after int64, limit int) ([]byte, int64, error) {
		return nil, after, nil
	}
	svc.PostFn = func(ctx context.Context, c *parley.Caller, room string, body []byte, key string) (*parley.PostResult, error) {
		return &parley.PostResult{Seq: 1}, nil
	}
	ts, _ := newServer(t, svc)
	tests := []struct {
		name, method, path, token, body string
		status                          int
		code                            string
	}{
		{"no token", "GET", "/v1/rooms/r/history", "", "", 401, "unauthorized"},
		{"bad token", "GET", "/v1/rooms/r/history", "nope", "", 401, "unauthorized"},
		{"bad json", "POST", "/v1/rooms", "admin", `{"name":`, 400, "invalid"},
		{"unknown field", "POST", "/v1/rooms", "admin", `{"name":"x","polcy":{}}`, 400, "invalid"},
		{"trailing data", "POST", "/v1/rooms", "admin", `{"name":"x"} {}`, 400, "invalid"},
		{"bad after", "GET", "/v1/rooms/r/history?after=-1", "r.lead", "", 400, "invalid"},
		{"bad limit", "GET", "/v1/rooms/r/history?limit=x", "r.lead", "", 400, "invalid"},
		{"huge body", "POST", "/v1/rooms/r/messages", "r.lead", strings.Repeat("x", 2<<20), 413, "too_large"},
		{"unknown route", "GET", "/v1/nothing", "r.lead", "", 404, "not_found"},
		{"unknown root route", "GET", "/nothing", "", "", 404, "not_found"},
		{"wrong method", "PUT", "/v1/rooms", "admin", "", 405, "method_not_allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, ts, tt.method, tt.path, tt.token, tt.body)
			if r.status != tt.status {
				t.Fatalf("status = %d, want %d: %s", r.status, tt.status, r.body)
			}
			e, _ := r.json(t)["error"].(map[string]any)
			if e["code"] != tt.code || e["message"] == "" || e["message"] == nil {
				t.Errorf("error = %v, want code %q and a message", e, tt.code)
			}
			if tt.status == 405 && r.header.Get("Allow") != "GET, POST" {
				t.Errorf("Allow = %q", r.header.Get("Allow"))
			}
		})
	}
}

func TestRoomsAndSeats(t *testing.T) {
	svc := authOnly()
	var gotPolicy *parley.Policy
	svc.CreateRoomFn = func(ctx context.Context, c *parley.Caller, name string, p *parley.Policy) (*parley.Room, error) {
		if !c.Admin {
			return nil, parley.Errorf(parley.EFORBIDDEN, "admin only")
		}
		gotPolicy = p
		return &parley.Room{Name: name, Policy: parley.DefaultPolicy()}, nil
	}
	var gotPatch string
	svc.UpdatePolicyFn = func(ctx context.Context, c *parley.Caller, room string, patch []byte) (*parley.Room, error) {
		gotPatch = string(patch)
		return &parley.Room{Name: room}, nil
	}
	svc.AddSeatFn = func(ctx context.Context, c *parley.Caller, room, name string, role parley.Role) (*parley.Seat, string, error) {
		return &parley.Seat{Room: room, Name: name, Role: role}, "tok-" + name, nil
	}
	svc.SeatsFn = func(ctx context.Context, c *parley.Caller, room string) ([]*parley.Seat, error) {
		return []*parley.Seat{{Room: room, Name: "yu", Role: parley.RoleHuman, TokenHash: []byte("secret-hash")}}, nil
	}
	svc.RotateSeatFn = func(ctx context.Context, c *parley.Caller, room, name string) (string, error) {
		return "new-" + name, nil
	}
	revoked := ""
	svc.RevokeSeatFn = func(ctx context.Context, c *parley.Caller, room, name string) error {
		revoked = room + "/" + name
		return nil
	}
	ts, _ := newServer(t, svc)

	r := do(t, ts, "POST", "/v1/rooms", "admin", `{"name":"team","policy":{"format":"lenient"}}`)
	if r.status != 201 || gotPolicy == nil || gotPolicy.Format != "lenient" {
		t.Fatalf("create: %d %s policy %+v", r.status, r.body, gotPolicy)
	}
	if r := do(t, ts, "POST", "/v1/rooms", "team.lead", `{"name":"x"}`); r.status != 403 {
		t.Errorf("create as a seat: %d", r.status)
	}
	if r := do(t, ts, "PATCH", "/v1/rooms/team", "admin", `{"format":"strict"}`); r.status != 200 || gotPatch != `{"format":"strict"}` {
		t.Errorf("patch: %d %s, service got %q", r.status, r.body, gotPatch)
	}
	if r := do(t, ts, "PATCH", "/v1/rooms/team", "admin", `[1]`); r.status != 400 {
		t.Errorf("patch with an array: %d", r.status)
	}
	r = do(t, ts, "POST", "/v1/rooms/team/seats", "admin", `{"name":"builder"}`)
	if r.status != 201 || string(bytes.TrimSpace(r.body)) != `{"room":"team","name":"builder","role":"agent","token":"tok-builder"}` {
		t.Errorf("add seat: %d %s", r.status, r.body)
	}
	r = do(t, ts, "GET", "/v1/rooms/team/seats", "admin", "")
	if r.status != 200 || bytes.Contains(r.body, []byte("hash")) || !bytes.Contains(r.body, []byte(`"seats":[`)) {
		t.Errorf("seats: %d %s", r.status, r.body)
	}
	r = do(t, ts, "POST", "/v1/rooms/team/seats/yu/rotate", "admin", "")
	if r.status != 200 || string(bytes.TrimSpace(r.body)) != `{"room":"team","name":"yu","role":"human","token":"new-yu"}` {
		t.Errorf("rotate: %d %s", r.status, r.body)
	}
	if r := do(t, ts, "DELETE", "/v1/rooms/team/seats/yu", "admin", ""); r.status != 204 || revoked != "team/yu" {
		t.Errorf("revoke: %d, revoked %q", r.status, revoked)
	}
}

// history is a fake room log: message i's text is "#i …\nbody i\n\n".
type history struct {
	mu    sync.Mutex
	msgs  []string // each message's history text
	recs  []*parley.Message
	watch []chan int64
}

// add stores a message of seat with the next seq, a minute after the one before, and its
// history text as the server renders it.
func (h *history) add(seat, body string, notes ...string) {
	h.mu.Lock()
	seq := int64(len(h.recs)) + 1
	m := &parley.Message{Room: "r", Seq: seq, Seat: seat, Body: body, Notes: notes,
		Time: time.Date(2026, 9, 19, 12, 0, 0, 0, time.UTC).Add(time.Duration(seq-1) * time.Minute)}
	h.recs = append(h.recs, m)
	h.msgs = append(h.msgs, string(textline.AppendMessage(nil, m)))
	ws := h.watch
	h.mu.Unlock()
	for _, w := range ws {
		select {
		case w <- seq:
		default:
		}
	}
}

func (h *history) install(svc *mock.RoomService) {
	svc.HistoryFn = func(ctx context.Context, c *parley.Caller, room string, after int64, limit int) ([]byte, int64, error) {
		if c.Seat != nil && c.Seat.Room != room {
			return nil, 0, parley.Errorf(parley.EFORBIDDEN, "you sit in %s", c.Seat.Room)
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		var b []byte
		last := after
		for i := after; i < int64(len(h.msgs)) && (limit <= 0 || i < after+int64(limit)); i++ {
			b = append(b, h.msgs[i]...)
			last = i + 1
		}
		return b, last, nil
	}
	svc.HistoryPageFn = func(ctx context.Context, c *parley.Caller, room string, after int64, limit int) (*parley.HistoryPage, error) {
		b, last, err := svc.HistoryFn(ctx, c, room, after, limit)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b)
		return &parley.HistoryPage{After: after, Last: last, Size: int64(len(b)), Sum: sum[:],
			Full:   limit > 0 && last-after == int64(limit),
			Stream: func(w io.Writer) error { _, err := w.Write(b); return err }}, nil
	}
	svc.MessagesFn = func(ctx context.Context, c *parley.Caller, room string, after int64, limit int, count parley.ReadCount) ([]*parley.Message, int64, error) {
		if c.Seat != nil && c.Seat.Room != room {
			return nil, 0, parley.Errorf(parley.EFORBIDDEN, "you sit in %s", c.Seat.Room)
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		last := int64(len(h.recs))
		if limit <= 0 {
			limit = parley.HistoryPageMessages
		}
		if after < 0 {
			after = max(0, last-int64(limit))
		}
		end := min(last, after+int64(limit))
		return append([]*parley.Message{}, h.recs[min(after, last):end]...), last, nil
	}
	svc.HoldFn = func(ctx context.Context, c *parley.Caller) (context.Context, context.CancelFunc, error) {
		ctx, cancel := context.WithCancel(ctx)
		return ctx, cancel, nil
	}
	svc.WatchFn = func(ctx context.Context, c *parley.Caller, room string) (<-chan int64, error) {
		if c.Seat != nil && c.Seat.Room != room {
			return nil, parley.Errorf(parley.EFORBIDDEN, "you sit in %s", c.Seat.Room)
		}
		ch := make(chan int64, 1)
		h.mu.Lock()
		h.watch = append(h.watch, ch)
		h.mu.Unlock()
		return ch, nil
	}
}

func TestHistoryCaching(t *testing.T) {
	h := &history{}
	for i := 1; i <= 5; i++ {
		h.add("lead", fmt.Sprintf("v1 note x to all n=1\nfact %d\n", i))
	}
	svc := authOnly()
	h.install(svc)
	ts, _ := newServer(t, svc)

	full := do(t, ts, "GET", "/v1/rooms/r/history?after=1&limit=2", "r.lead", "")
	if full.status != 200 || full.header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("%d %v", full.status, full.header)
	}
	if want := h.msgs[1] + h.msgs[2]; string(full.body) != want {
		t.Errorf("body = %q, want %q", full.body, want)
	}
	if got := full.header.Get("X-Parley-Last-Seq"); got != "3" {
		t.Errorf("X-Parley-Last-Seq = %q", got)
	}
	if got := full.header.Get("Cache-Control"); !strings.Contains(got, "immutable") {
		t.Errorf("full page Cache-Control = %q", got)
	}
	if got := full.header.Get(phttp.NextAfterHeader); got != "3" {
		t.Errorf("full page %s = %q, want 3", phttp.NextAfterHeader, got)
	}
	other := do(t, ts, "GET", "/v1/rooms/r/history?after=1&limit=2", "r.builder", "")
	if !bytes.Equal(other.body, full.body) || other.header.Get("ETag") != full.header.Get("ETag") {
		t.Error("two seats got different bytes or ETags for the same range")
	}
	if r := do(t, ts, "GET", "/v1/rooms/r/history?after=1&limit=2", "r.lead", "", "If-None-Match", full.header.Get("ETag")); r.status != 304 || len(r.body) != 0 {
		t.Errorf("If-None-Match: %d %q", r.status, r.body)
	}
	partial := do(t, ts, "GET", "/v1/rooms/r/history?after=3&limit=10", "r.lead", "")
	if got := partial.header.Get("Cache-Control"); strings.Contains(got, "immutable") || !strings.Contains(got, "no-cache") {
		t.Errorf("partial page Cache-Control = %q", got)
	}
	if got := partial.header.Get(phttp.NextAfterHeader); got != "" {
		t.Errorf("the last page has %s = %q", phttp.NextAfterHeader, got)
	}
	tail := do(t, ts, "GET", "/v1/rooms/r/history?after=5", "r.lead", "")
	if tail.status != 200 || len(tail.body) != 0 || tail.header.Get("X-Parley-Last-Seq") != "5" {
		t.Errorf("empty tail: %d %q %v", tail.status, tail.body, tail.header)
	}
	if r := do(t, ts, "GET", "/v1/rooms/r/history", "other.lead", ""); r.status != 403 {
		t.Errorf("other room: %d", r.status)
	}
}

func TestInboxAndStateNegotiation(t *testing.T) {
	svc := authOnly()
	svc.InboxFn = func(ctx context.Context, c *parley.Caller, room string) (*parley.Inbox, error) {
		return &parley.Inbox{Seat: c.Seat.Name, Room: room, Unanswered: []parley.InboxAsk{{Seq: 3, From: "builder", Line: "ask how"}}}, nil
	}
	svc.StateFn = func(ctx context.Context, c *parley.Caller, room, topic string) (*parley.StateRecord, error) {
		return &parley.StateRecord{Room: room, Topic: topic, LastSeq: 3}, nil
	}
	ts, _ := newServer(t, svc, phttp.WithRenderer(fakeRenderer{}))
	r := do(t, ts, "GET", "/v1/rooms/r/inbox", "r.yu", "", "Accept", "text/plain, application/json;q=0.9")
	m := r.json(t)
	if m["seat"] != "yu" || m["open"] == nil {
		t.Errorf("inbox JSON: %s", r.body)
	}
	if r := do(t, ts, "GET", "/v1/rooms/r/inbox", "r.yu", ""); string(r.body) != "inbox of yu\n" || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") {
		t.Errorf("inbox text: %q %v", r.body, r.header)
	}
	if r := do(t, ts, "GET", "/v1/rooms/r/state/limiter", "r.yu", ""); string(r.body) != "state limiter\n" {
		t.Errorf("state text: %q", r.body)
	}
	if r := do(t, ts, "GET", "/v1/rooms/r/state/limiter", "r.yu", "", "Accept", "application/json"); r.json(t)["topic"] != "limiter" {
		t.Errorf("state JSON: %s", r.body)
	}
}

func TestRunsPassContentTypeAndID(t *testing.T) {
	svc := authOnly()
	svc.PostRunFn = func(ctx context.Context, c *parley.Caller, room, ct string, body []byte, id string) (*parley.Run, error) {
		if ct != "application/xml" || id != "ci-7" || !bytes.HasPrefix(body, []byte("<testsuites")) {
			return nil, parley.Errorf(parley.EINVALID, "got %q %q", ct, id)
		}
		return &parley.Run{Room: room, ID: id, Passed: 12, Seat: c.Seat.Name}, nil
	}
	ts, _ := newServer(t, svc)
	r := do(t, ts, "POST", "/v1/rooms/r/runs?id=ci-7", "r.ci", `<testsuites tests="12"/>`, "Content-Type", "application/xml")
	if r.status != 201 || r.json(t)["passed"] != 12.0 {
		t.Errorf("%d %s", r.status, r.body)
	}
}

// event is one parsed Server-Sent Event.
type event struct {
	id, name, data string
}

// readEvents parses SSE from r as the spec says (data lines joined with "\n"), skipping
// comments, and sends each event on the returned channel.
func readEvents(r io.Reader) <-chan event {
	ch := make(chan event)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		var ev event
		var data []string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if data != nil {
					ev.data = strings.Join(data, "\n")
					ch <- ev
				}
				ev, data = event{}, nil
			case strings.HasPrefix(line, ":"):
			default:
				k, v, _ := strings.Cut(line, ":")
				v = strings.TrimPrefix(v, " ")
				switch k {
				case "id":
					ev.id = v
				case "event":
					ev.name = v
				case "data":
					data = append(data, v)
				}
			}
		}
	}()
	return ch
}

func TestEvents(t *testing.T) {
	h := &history{}
	h.add("lead", "v1 note x to all n=1\nfact 1\n")
	h.add("builder", "v1 note x to all n=1\nfact 2\n", "! ev#1 verified")
	svc := authOnly()
	h.install(svc)
	srv := httptest.NewUnstartedServer(phttp.NewServer(svc, phttp.WithHeartbeat(50*time.Millisecond), phttp.WithLogger(slog.New(slog.DiscardHandler))))
	// A read timeout shorter than the stream's life: the stream must outlive it.
	srv.Config.ReadTimeout = 300 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/v1/rooms/r/events?after=0", nil)
	req.Header.Set("Authorization", "Bearer r.yu")
	req.Header.Set("Last-Event-ID", "1")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	events := readEvents(resp.Body)
	ev := <-events
	if ev.id != "2" || ev.name != "message" || ev.data+"\n" != h.msgs[1] {
		t.Fatalf("first event after Last-Event-ID 1 = %+v", ev)
	}
	time.Sleep(500 * time.Millisecond) // past the read timeout, with heartbeats
	h.add("yu", "v1 answer x to builder re 2 n=1\nfact 3\n")
	select {
	case ev := <-events:
		if ev.id != "3" || ev.data+"\n" != h.msgs[2] {
			t.Errorf("woken event = %+v", ev)
		}
	case <-ctx.Done():
		t.Fatal("no event after an append")
	}

	// Another room's stream is refused before it starts, as JSON.
	r := do(t, srv, "GET", "/v1/rooms/r/events", "other.x", "")
	if r.status != 403 || r.json(t)["error"] == nil {
		t.Errorf("other room: %d %s", r.status, r.body)
	}
}

func TestMountAndMetrics(t *testing.T) {
	svc := authOnly()
	svc.RoomsFn = func(ctx context.Context, c *parley.Caller) ([]*parley.Room, error) {
		if !c.Admin {
			return nil, errors.New("metrics must count as admin")
		}
		return []*parley.Room{{Name: "a"}, {Name: "b"}}, nil
	}
	svc.PostFn = func(ctx context.Context, c *parley.Caller, room string, body []byte, key string) (*parley.PostResult, error) {
		return nil, parley.Errorf(parley.ECONFLICT, "repeat").With("seq", 1)
	}
	s := phttp.NewServer(svc, phttp.WithLogger(slog.New(slog.DiscardHandler)))
	s.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ui") }))
	s.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "mcp") }))
	ts := httptest.NewServer(s)
	defer ts.Close()

	if r := do(t, ts, "GET", "/anything", "", ""); string(r.body) != "ui" {
		t.Errorf("UI fallback: %q", r.body)
	}
	if r := do(t, ts, "POST", "/mcp", "", ""); string(r.body) != "mcp" {
		t.Errorf("mcp: %q", r.body)
	}
	if r := do(t, ts, "GET", "/v1/nope", "", ""); r.status != 404 || r.json(t)["error"] == nil {
		t.Errorf("unknown API route with a UI mounted: %d %s", r.status, r.body)
	}
	if r := do(t, ts, "GET", "/healthz", "", ""); r.status != 200 || string(r.body) != "ok\n" {
		t.Errorf("healthz: %d %q", r.status, r.body)
	}
	do(t, ts, "POST", "/v1/rooms/r/messages", "r.lead", "x")
	r := do(t, ts, "GET", "/metrics", "", "")
	for _, want := range []string{
		"parley_rooms 2\n",
		"parley_posts_total{status=\"409\"} 1\n",
		`parley_http_request_duration_seconds_count{route="POST /v1/rooms/{room}/messages",status_class="4xx"} 1`,
		`parley_http_request_duration_seconds_bucket{route="POST /v1/rooms/{room}/messages",status_class="4xx",le="+Inf"} 1`,
		"# TYPE parley_uptime_seconds gauge\n",
	} {
		if !strings.Contains(string(r.body), want) {
			t.Errorf("metrics lack %q:\n%s", want, r.body)
		}
	}
}

// TestEventsCarriageReturn checks that a CR in a stored body (one stored before the line
// rules) cannot break the event stream's framing, though SSE ends a
// line at CR too: a CRLF is a line end, any other CR is shown escaped (package textline).
func TestEventsCarriageReturn(t *testing.T) {
	h := &history{}
	h.add("lead", "hello\rworld\r\n")
	h.add("lead", "next\n")
	svc := authOnly()
	h.install(svc)
	ts, _ := newServer(t, svc)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/v1/rooms/r/events", nil)
	req.Header.Set("Authorization", "Bearer r.yu")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := readEvents(resp.Body)
	if ev := <-events; ev.id != "1" || ev.data+"\n" != "#1 lead 20260919T120000Z\nhello[U+000D]world\n\n" {
		t.Errorf("event 1 = %+v", ev)
	}
	if ev := <-events; ev.id != "2" || ev.data+"\n" != h.msgs[1] {
		t.Errorf("event 2 = %+v", ev)
	}
}

// TestCloseStreams checks that shutting down ends open event streams, which would otherwise
// hold http.Server.Shutdown until its deadline.
func TestCloseStreams(t *testing.T) {
	h := &history{}
	svc := authOnly()
	h.install(svc)
	s := phttp.NewServer(svc, phttp.WithLogger(slog.New(slog.DiscardHandler)))
	ts := httptest.NewServer(s)
	defer ts.Close()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", ts.URL+"/v1/rooms/r/events", nil)
	req.Header.Set("Authorization", "Bearer r.yu")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	done := make(chan error, 1)
	go func() { _, err := io.Copy(io.Discard, resp.Body); done <- err }()
	s.CloseStreams()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("stream ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stream is still open after CloseStreams")
	}
}

// TestEventsEndOnRevocation checks that an open stream ends as soon as its hold does (the
// service cancels it when the token is revoked or rotated), with a comment saying why, and
// sends nothing after.
func TestEventsEndOnRevocation(t *testing.T) {
	h := &history{}
	h.add("lead", "v1 note x to all n=1\nfact 1\n")
	svc := authOnly()
	h.install(svc)
	held := make(chan context.CancelCauseFunc, 1)
	svc.HoldFn = func(ctx context.Context, c *parley.Caller) (context.Context, context.CancelFunc, error) {
		ctx, cancel := context.WithCancelCause(ctx)
		held <- cancel
		return ctx, func() { cancel(nil) }, nil
	}
	srv := httptest.NewServer(phttp.NewServer(svc, phttp.WithHeartbeat(time.Hour), phttp.WithLogger(slog.New(slog.DiscardHandler))))
	t.Cleanup(srv.Close)

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/v1/rooms/r/events?after=0", nil)
	req.Header.Set("Authorization", "Bearer r.yu")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended before the first event: %v", err)
		}
		if line == "id: 1\n" {
			break
		}
	}
	start := time.Now()
	(<-held)(parley.Errorf(parley.EUNAUTHORIZED, "the token of seat yu was revoked"))
	rest, err := io.ReadAll(br)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the stream ended %v after its hold", d)
	}
	if strings.Contains(string(rest), "id: ") || !strings.Contains(string(rest), ": the token of seat yu was revoked\n") {
		t.Errorf("after the hold ended: %q", rest)
	}
}

// fakeRenderer marks its output so a test can tell whose renderer wrote a response.
type fakeRenderer struct{}

func (fakeRenderer) InboxText(in *parley.Inbox) string      { return "inbox of " + in.Seat + "\n" }
func (fakeRenderer) StateText(r *parley.StateRecord) string { return "state " + r.Topic + "\n" }
