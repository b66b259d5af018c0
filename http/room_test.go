package http_test

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	phttp "github.com/parleyhq/parley/http"
	"github.com/parleyhq/parley/internal/sqlitetest"
	"github.com/parleyhq/parley/room"
)

const adminToken = "test-admin-token-0123456789"

// newRealServer serves the real room service on a real SQLite file.
func newRealServer(t testing.TB) *httptest.Server {
	t.Helper()
	store := sqlitetest.Open(t)
	log := slog.New(slog.DiscardHandler)
	svc, err := room.New(store, room.Config{AdminToken: adminToken, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(phttp.NewServer(svc, phttp.WithLogger(log), phttp.WithRenderer(room.Renderer{})))
	t.Cleanup(ts.Close)
	return ts
}

// TestRealService walks the API over the real room service and store, checking the status
// and error code of every answer: the contract between the service's error codes and the
// HTTP statuses, end to end.
func TestRealService(t *testing.T) {
	ts := newRealServer(t)
	tokens := map[string]string{}
	seat := func(room, name, role string) {
		t.Helper()
		r := do(t, ts, "POST", "/v1/rooms/"+room+"/seats", adminToken, fmt.Sprintf(`{"name":%q,"role":%q}`, name, role))
		if r.status != 201 {
			t.Fatalf("seat %s: %d %s", name, r.status, r.body)
		}
		tokens[name] = r.json(t)["token"].(string)
	}
	if r := do(t, ts, "POST", "/v1/rooms", adminToken, `{"name":"team","policy":{"max_message_bytes":1024}}`); r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	if r := do(t, ts, "POST", "/v1/rooms", adminToken, `{"name":"slow","policy":{"seat_messages_per_minute":1,"seat_burst":1}}`); r.status != 201 {
		t.Fatalf("create slow: %d %s", r.status, r.body)
	}
	seat("team", "lead", "agent")
	seat("team", "builder", "agent")
	seat("team", "ci", "runner")
	seat("slow", "snail", "agent")
	lead, builder := tokens["lead"], tokens["builder"]

	note := "v1 note limiter to builder n=1\noutcome merged\n"
	tests := []struct {
		name, method, path, token, body string
		headers                         []string
		status                          int
		code                            string // error code, for errors
	}{
		{"room exists", "POST", "/v1/rooms", adminToken, `{"name":"team"}`, nil, 409, "conflict"},
		{"room name invalid", "POST", "/v1/rooms", adminToken, `{"name":"no spaces please"}`, nil, 422, "invalid"},
		{"room by a seat", "POST", "/v1/rooms", lead, `{"name":"mine"}`, nil, 403, "forbidden"},
		{"no such room", "GET", "/v1/rooms/nope", adminToken, "", nil, 404, "not_found"},
		{"policy patch", "PATCH", "/v1/rooms/team", adminToken, `{"dedup_messages":100}`, nil, 200, ""},
		{"policy patch invalid", "PATCH", "/v1/rooms/team", adminToken, `{"format":"loose"}`, nil, 422, "invalid"},
		{"seat exists", "POST", "/v1/rooms/team/seats", adminToken, `{"name":"lead"}`, nil, 409, "conflict"},
		{"post", "POST", "/v1/rooms/team/messages", lead, note, []string{"Idempotency-Key", "k1"}, 201, ""},
		{"replay", "POST", "/v1/rooms/team/messages", lead, note, []string{"Idempotency-Key", "k1"}, 200, ""},
		{"repeat", "POST", "/v1/rooms/team/messages", lead, note, nil, 409, "conflict"},
		{"wrong n", "POST", "/v1/rooms/team/messages", lead, "v1 note limiter to builder n=2\noutcome merged\n", nil, 422, "invalid"},
		{"unknown addressee", "POST", "/v1/rooms/team/messages", lead, "v1 note limiter to nobody n=1\noutcome merged\n", nil, 422, "invalid"},
		{"over the room's cap", "POST", "/v1/rooms/team/messages", lead, "v1 note limiter to builder n=1\noutcome " + strings.Repeat("a", 2000) + "\n", nil, 413, "too_large"},
		{"other room", "POST", "/v1/rooms/slow/messages", lead, note, nil, 403, "forbidden"},
		{"bad token", "GET", "/v1/rooms/team/history", "pk_" + strings.Repeat("A", 43), "", nil, 401, "unauthorized"},
		{"post by parts", "POST", "/v1/rooms/team/messages", lead, `{"intent":"note","topic":"limiter","to":["builder"],"lines":["outcome merged again"]}`, []string{"Content-Type", "application/json"}, 201, ""},
		{"post by parts, no lines", "POST", "/v1/rooms/team/messages", lead, `{"intent":"note","topic":"limiter","to":["builder"]}`, []string{"Content-Type", "application/json"}, 422, "invalid"},
		{"post by parts, bad JSON", "POST", "/v1/rooms/team/messages", lead, `{"intent":"note",`, []string{"Content-Type", "application/json"}, 400, "invalid"},
		{"post JSON body", "POST", "/v1/rooms/team/messages", lead, `{"body":"v1 note limiter to builder n=1\noutcome merged thrice\n"}`, []string{"Content-Type", "application/json; charset=utf-8"}, 201, ""},
		{"JSON as text", "POST", "/v1/rooms/team/messages", lead, `{"body":"x"}`, []string{"Content-Type", "text/plain"}, 422, "invalid"},
		{"search", "GET", "/v1/rooms/team/search?q=merged", builder, "", nil, 200, ""},
		{"search, no q", "GET", "/v1/rooms/team/search", builder, "", nil, 400, "invalid"},
		{"search, limit 101", "GET", "/v1/rooms/team/search?q=merged&limit=101", builder, "", nil, 400, "invalid"},
		{"search, two q", "GET", "/v1/rooms/team/search?q=a&q=b", builder, "", nil, 400, "invalid"},
		{"search, other room", "GET", "/v1/rooms/slow/search?q=merged", builder, "", nil, 403, "forbidden"},
		{"history", "GET", "/v1/rooms/team/history?after=0", builder, "", nil, 200, ""},
		{"inbox", "GET", "/v1/rooms/team/inbox", builder, "", nil, 200, ""},
		{"state", "GET", "/v1/rooms/team/state/limiter", builder, "", nil, 200, ""},
		{"stats", "GET", "/v1/rooms/team/stats", lead, "", nil, 200, ""},
		{"lint", "POST", "/v1/rooms/team/lint", lead, "v1 note limiter to builder n=1\ndeadline 2026-09-19\n", nil, 200, ""},
		{"run by an agent", "POST", "/v1/rooms/team/runs", lead, `{"id":"ci-1","passed":1,"failed":0}`, []string{"Content-Type", "application/json"}, 403, "forbidden"},
		{"run", "POST", "/v1/rooms/team/runs", tokens["ci"], `{"id":"ci-1","passed":12,"failed":0}`, []string{"Content-Type", "application/json"}, 201, ""},
		{"run exists", "POST", "/v1/rooms/team/runs", tokens["ci"], `{"id":"ci-1","passed":12,"failed":0}`, []string{"Content-Type", "application/json"}, 409, "conflict"},
		{"run as JUnit", "POST", "/v1/rooms/team/runs?id=ci-2", tokens["ci"], `<testsuite tests="3" failures="1"/>`, []string{"Content-Type", "application/xml"}, 201, ""},
		{"slow 1", "POST", "/v1/rooms/slow/messages", tokens["snail"], "v1 note x to all n=1\noutcome one\n", nil, 201, ""},
		{"slow 2", "POST", "/v1/rooms/slow/messages", tokens["snail"], "v1 note x to all n=1\noutcome two\n", nil, 429, "rate_limited"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, ts, tt.method, tt.path, tt.token, tt.body, tt.headers...)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.body)
			}
			if tt.code == "" {
				return
			}
			m := r.json(t)
			if e, _ := m["error"].(map[string]any); e["code"] != tt.code || e["message"] == "" {
				t.Errorf("error %v, want code %q", m["error"], tt.code)
			}
			switch tt.status {
			case 409:
				if strings.Contains(tt.path, "/messages") && m["seq"] != 1.0 {
					t.Errorf("repeat without the original seq: %s", r.body)
				}
			case 422:
				if strings.Contains(tt.path, "/messages") && m["diagnostics"] == nil {
					t.Errorf("invalid message without diagnostics: %s", r.body)
				}
			case 429:
				if r.header.Get("Retry-After") == "" || m["retry_after"] == nil {
					t.Errorf("429 without Retry-After: %v %s", r.header, r.body)
				}
			}
		})
	}

	// Rotation and revocation end the old token.
	r := do(t, ts, "POST", "/v1/rooms/team/seats/builder/rotate", adminToken, "")
	if r.status != 200 || r.json(t)["role"] != "agent" {
		t.Fatalf("rotate: %d %s", r.status, r.body)
	}
	fresh := r.json(t)["token"].(string)
	if r := do(t, ts, "GET", "/v1/rooms/team/inbox", builder, ""); r.status != 401 {
		t.Errorf("old token after rotation: %d", r.status)
	}
	if r := do(t, ts, "GET", "/v1/rooms/team/inbox", fresh, "", "Accept", "application/json"); r.status != 200 || r.json(t)["seat"] != "builder" {
		t.Errorf("new token: %d %s", r.status, r.body)
	}
	if r := do(t, ts, "DELETE", "/v1/rooms/team/seats/builder", adminToken, ""); r.status != 204 {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	if r := do(t, ts, "GET", "/v1/rooms/team/inbox", fresh, ""); r.status != 401 {
		t.Errorf("revoked token: %d", r.status)
	}
}

// TestPostKeepsConnection posts over one raw keep-alive connection, a text body and then a
// JSON one (both read to their end, then closed by the handler), and reads both answers and
// a third request's from it: the server keeps the connection for the next request, as it does
// for a body it drains itself.
func TestPostKeepsConnection(t *testing.T) {
	ts := newRealServer(t)
	tok := benchRoom(t, ts.URL)
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	send := func(ctype, body string) *http.Response {
		t.Helper()
		fmt.Fprintf(conn, "POST /v1/rooms/bench/messages HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s",
			tok, ctype, len(body), body)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("reading the answer: %v", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	for i, p := range []struct{ ctype, body string }{
		{"text/plain", "v1 note limiter to all n=1\ncost 1 tokens\n"},
		{"application/json", `{"body":"v1 note limiter to all n=1\ncost 2 tokens\n"}`},
		{"text/plain", "v1 note limiter to all n=1\ncost 3 tokens\n"},
	} {
		if resp := send(p.ctype, p.body); resp.StatusCode != http.StatusCreated || resp.Close {
			t.Fatalf("post %d: status %d, close %v", i+1, resp.StatusCode, resp.Close)
		}
	}
}
