package reliability_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/parleyhq/parley/internal/pgtest"
	"github.com/parleyhq/parley/internal/servertest"
)

// Revocation and rotation act at once on every edge that outlives its authentication: the
// event stream (GET /v1/rooms/{room}/events), the web UI's live stream, the MCP standing
// stream (GET /mcp) and a waiting MCP read. Each test opens one, revokes or rotates its
// token, posts right after, and checks that the stream or call ended within the bound (1s on
// SQLite; 2s across two `parley serve` processes on one PostgreSQL database, the stream held
// by the one that did not revoke) and that nothing posted after the revocation reached it.

func init() { caseSets = append(caseSets, revokeCases) }

// revokeCases are the single requests of a revoked or rotated token, and of seats that try to
// revoke or rotate what is not theirs.
func revokeCases(env *hostileEnv) []hostile {
	return []hostile{
		{name: "revoked token opens an event stream", method: "GET", path: "/v1/rooms/h/events", as: "gone",
			status: 401, code: "unauthorized", phrase: "unknown or revoked token"},
		{name: "revoked token resumes an event stream", method: "GET", path: "/v1/rooms/h/events", as: "gone",
			header: []string{"Last-Event-ID", "1"}, status: 401, code: "unauthorized", phrase: "unknown or revoked token"},
		{name: "revoked token reads history", method: "GET", path: "/v1/rooms/h/history", as: "gone",
			status: 401, code: "unauthorized", phrase: "unknown or revoked token"},
		{name: "rotate a revoked seat", method: "POST", path: "/v1/rooms/h/seats/gone/rotate", as: "admin",
			status: 422, code: "invalid", phrase: "seat gone is revoked"},
		{name: "agent rotates another seat's token", method: "POST", path: "/v1/rooms/h/seats/b/rotate", as: "a",
			status: 403, code: "forbidden", phrase: "takes an admin seat"},
		{name: "agent revokes another seat", method: "DELETE", path: "/v1/rooms/h/seats/b", as: "a",
			status: 403, code: "forbidden", phrase: "takes an admin seat"},
		{name: "seat of another room revokes", method: "DELETE", path: "/v1/rooms/h/seats/a", as: "x",
			status: 403, code: "forbidden", phrase: "sits in room other"},
		{name: "revoke a seat that does not exist", method: "DELETE", path: "/v1/rooms/h/seats/nobody", as: "admin",
			status: 404, code: "not_found", phrase: "no seat nobody in room h"},
	}
}

// revokeEnv is one or two real servers on one database: a is where the admin revokes and the
// writer posts, b is where the streams are held (b is a on SQLite).
type revokeEnv struct {
	store string
	a, b  *servertest.Server
	bound time.Duration
	w     string // the writer's token
}

func startRevokeEnv(t *testing.T, store string) *revokeEnv {
	t.Helper()
	env := &revokeEnv{store: store}
	if store == "sqlite" {
		env.a = servertest.Start(t, "sqlite", servertest.Options{DB: "sqlite:" + filepath.Join(t.TempDir(), "parley.db")})
		env.b, env.bound = env.a, time.Second
	} else {
		dsn, admin := pgtest.DSN(t), servertest.NewToken()
		env.a = servertest.Start(t, "a", servertest.Options{DB: dsn, Admin: admin})
		env.b = servertest.Start(t, "b", servertest.Options{DB: dsn, Admin: admin})
		env.bound = 2 * time.Second
	}
	env.a.CreateRoom(t, "rv", servertest.Generous())
	env.w = env.a.AddSeat(t, "rv", "writer", "agent")
	return env
}

// post posts a note with the marker as the writer on a.
func (env *revokeEnv) post(t *testing.T, marker string) {
	t.Helper()
	body := fmt.Appendf(nil, "v1 note rv to all n=1\nfact %s\n", marker)
	if r := env.a.Call(t, "POST", "/v1/rooms/rv/messages", env.w, body); r.Status != http.StatusCreated {
		t.Fatalf("post %s: %s", marker, r)
	}
}

// lastSeq is the room's last seq.
func (env *revokeEnv) lastSeq(t *testing.T) int64 {
	t.Helper()
	entries, err := servertest.ParseHistory(env.a.History(t, "rv", env.a.Admin))
	if err != nil || len(entries) == 0 {
		t.Fatalf("history: %d entries, %v", len(entries), err)
	}
	return entries[len(entries)-1].Seq
}

// end revokes or rotates the seat on a and returns when that returned, and the new token for
// a rotation.
func (env *revokeEnv) end(t *testing.T, action, seat string) (time.Time, string) {
	t.Helper()
	if action == "revoke" {
		r := env.a.Call(t, "DELETE", "/v1/rooms/rv/seats/"+seat, env.a.Admin, nil)
		if r.Status != http.StatusNoContent {
			t.Fatalf("revoke %s: %s", seat, r)
		}
		return time.Now(), ""
	}
	r := env.a.Call(t, "POST", "/v1/rooms/rv/seats/"+seat+"/rotate", env.a.Admin, nil)
	var out struct{ Token string }
	if r.Status != http.StatusOK || r.JSON(&out) != nil || out.Token == "" {
		t.Fatalf("rotate %s: %s", seat, r)
	}
	return time.Now(), out.Token
}

// liveBody is a response body read in the background, line by line, with the time it ended.
type liveBody struct {
	resp  *http.Response
	sid   string // for an MCP stream or call: its session
	mu    sync.Mutex
	text  strings.Builder
	done  chan struct{}
	endAt time.Time
}

func readLive(resp *http.Response) *liveBody {
	lb := &liveBody{resp: resp, done: make(chan struct{})}
	go lb.read(resp.Body)
	return lb
}

func (lb *liveBody) read(body io.ReadCloser) {
	defer close(lb.done)
	defer body.Close()
	br := bufio.NewReader(body)
	for {
		line, err := br.ReadString('\n')
		lb.mu.Lock()
		lb.text.WriteString(line)
		if err != nil {
			lb.endAt = time.Now()
		}
		lb.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (lb *liveBody) String() string {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	return lb.text.String()
}

// waitFor waits until the body holds s.
func (lb *liveBody) waitFor(t *testing.T, s string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(lb.String(), s) {
		select {
		case <-lb.done:
			if !strings.Contains(lb.String(), s) {
				t.Fatalf("the stream ended without %q:\n%s", s, lb)
			}
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q within 10s:\n%s", s, lb)
		}
	}
}

// ended waits up to limit for the body to end and returns when it did.
func (lb *liveBody) ended(limit time.Duration) (time.Time, bool) {
	select {
	case <-lb.done:
		return lb.endAt, true
	case <-time.After(limit):
		return time.Time{}, false
	}
}

// get opens a long-lived GET.
func get(t *testing.T, ctx context.Context, url string, headers ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp
}

// rawMCP is a raw MCP session over streamable HTTP, so that the test sees exactly when
// the server ends a stream or a call.
type rawMCP struct {
	url, token, id string
}

const mcpVersion = "2025-06-18"

func mcpPost(ctx context.Context, url, token, sid string, msg any) (*http.Response, error) {
	b, _ := json.Marshal(msg)
	req, _ := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", mcpVersion)
	}
	return http.DefaultClient.Do(req)
}

// openMCP initializes a session as token on srv.
func openMCP(t *testing.T, srv *servertest.Server, token string) *rawMCP {
	t.Helper()
	m := &rawMCP{url: srv.URL + "/mcp", token: token}
	resp, err := mcpPost(t.Context(), m.url, token, "", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize",
		"params": map[string]any{"protocolVersion": mcpVersion, "capabilities": map[string]any{},
			"clientInfo": map[string]any{"name": "revoke-test", "version": "0"}}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m.id = resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || m.id == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	resp, err = mcpPost(t.Context(), m.url, token, m.id, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %d", resp.StatusCode)
	}
	return m
}

// call calls a tool and returns the whole answer.
func (m *rawMCP) call(t *testing.T, tool string, args map[string]any) (int, string) {
	t.Helper()
	resp, err := mcpPost(t.Context(), m.url, m.token, m.id, map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// edge opens one long-lived stream or call as token on srv and returns it once it is
// established.
type edge struct {
	name string
	open func(t *testing.T, ctx context.Context, srv *servertest.Server, token string, after int64) *liveBody
	// reopen checks the edge with the token after the revocation or rotation: a refusal for
	// the old token, and for a rotation's new one the message posted after it.
	check func(t *testing.T, env *revokeEnv, old, new string, after int64, marker string)
}

var revokeEdges = []edge{
	{name: "sse", open: func(t *testing.T, ctx context.Context, srv *servertest.Server, token string, after int64) *liveBody {
		resp := get(t, ctx, fmt.Sprintf("%s/v1/rooms/rv/events?after=%d", srv.URL, after), "Authorization", "Bearer "+token)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("events: %d", resp.StatusCode)
		}
		lb := readLive(resp)
		lb.waitFor(t, "retry: 3000\n")
		return lb
	}, check: func(t *testing.T, env *revokeEnv, old, new string, after int64, marker string) {
		if r := env.b.Call(t, "GET", "/v1/rooms/rv/events", old, nil); r.Status != http.StatusUnauthorized {
			t.Errorf("the old token opens a stream: %s", r)
		}
		if new != "" {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			resp := get(t, ctx, fmt.Sprintf("%s/v1/rooms/rv/events?after=%d", env.b.URL, after), "Authorization", "Bearer "+new)
			lb := readLive(resp)
			lb.waitFor(t, marker)
		}
	}},
	{name: "web", open: func(t *testing.T, ctx context.Context, srv *servertest.Server, token string, after int64) *liveBody {
		cookie := webSignIn(t, srv, token)
		resp := get(t, ctx, fmt.Sprintf("%s/ui/rooms/rv/events?after=%d", srv.URL, after), "Cookie", cookie)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("web events: %d", resp.StatusCode)
		}
		lb := readLive(resp)
		lb.waitFor(t, "retry: 3000\n")
		return lb
	}, check: func(t *testing.T, env *revokeEnv, old, new string, after int64, marker string) {
		form := url.Values{"token": {old}}.Encode()
		r := env.b.Call(t, "POST", "/signin", "", []byte(form), "Content-Type", "application/x-www-form-urlencoded")
		if r.Status != http.StatusUnauthorized || !strings.Contains(string(r.Body), "unknown or was revoked") {
			t.Errorf("the old token signs in: %d", r.Status)
		}
		if new != "" {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			resp := get(t, ctx, fmt.Sprintf("%s/ui/rooms/rv/events?after=%d", env.b.URL, after), "Cookie", webSignIn(t, env.b, new))
			lb := readLive(resp)
			lb.waitFor(t, marker)
		}
	}},
	{name: "mcp-stream", open: func(t *testing.T, ctx context.Context, srv *servertest.Server, token string, after int64) *liveBody {
		m := openMCP(t, srv, token)
		resp := get(t, ctx, m.url, "Authorization", "Bearer "+token, "Mcp-Session-Id", m.id,
			"Mcp-Protocol-Version", mcpVersion, "Accept", "text/event-stream")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("standing stream: %d", resp.StatusCode)
		}
		lb := readLive(resp)
		lb.sid = m.id
		return lb
	}, check: checkMCP},
	{name: "mcp-read-wait", open: func(t *testing.T, ctx context.Context, srv *servertest.Server, token string, after int64) *liveBody {
		m := openMCP(t, srv, token)
		if status, body := m.call(t, "read", map[string]any{"after": after}); status != http.StatusOK || strings.Contains(body, `"isError":true`) {
			t.Fatalf("read: %d %s", status, body)
		}
		// The answer's headers come with the answer: the call runs in the background.
		lb := &liveBody{sid: m.id, done: make(chan struct{})}
		go func() {
			resp, err := mcpPost(ctx, m.url, token, m.id, map[string]any{"jsonrpc": "2.0", "id": 3, "method": "tools/call",
				"params": map[string]any{"name": "read", "arguments": map[string]any{"wait": 60}}})
			if err != nil {
				lb.mu.Lock()
				lb.text.WriteString("transport error: " + err.Error())
				lb.endAt = time.Now()
				lb.mu.Unlock()
				close(lb.done)
				return
			}
			lb.resp = resp
			lb.read(resp.Body)
		}()
		// The call is waiting once it has not answered for a while.
		if _, ok := lb.ended(300 * time.Millisecond); ok {
			t.Fatalf("read wait=60 answered at once: %s", lb)
		}
		return lb
	}, check: checkMCP},
}

// checkMCP: the old token is refused on the session and for a new one; a rotation's new
// token finds the old token's session gone (404) and reads the message in a session of its
// own.
func checkMCP(t *testing.T, env *revokeEnv, old, new string, after int64, marker string) {
	resp, err := mcpPost(t.Context(), env.b.URL+"/mcp", old, "", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize",
		"params": map[string]any{"protocolVersion": mcpVersion, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "x", "version": "0"}}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the old token opens an MCP session: %d", resp.StatusCode)
	}
	if new != "" {
		m := openMCP(t, env.b, new)
		status, body := m.call(t, "read", map[string]any{"after": after})
		if status != http.StatusOK || !strings.Contains(body, marker) {
			t.Errorf("the new token's read: %d %s", status, body)
		}
	}
}

// webSignIn signs in to the web UI with token and returns the session cookie.
func webSignIn(t *testing.T, srv *servertest.Server, token string) string {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(srv.URL+"/signin", url.Values{"token": {token}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, ck := range resp.Cookies() {
		if ck.Name == "parley_session" && ck.Value != "" {
			return ck.Name + "=" + ck.Value
		}
	}
	t.Fatalf("sign in: %d, no session cookie", resp.StatusCode)
	return ""
}

// TestRevokeAtOnce measures, for each edge and for revocation and rotation, the time from the
// revoke or rotate call returning to the stream or call ending, on SQLite and across two
// PostgreSQL-backed servers.
func TestRevokeAtOnce(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { revokeAtOnce(t, "sqlite") })
	t.Run("postgres", func(t *testing.T) { revokeAtOnce(t, "postgres") })
}

func revokeAtOnce(t *testing.T, store string) {
	env := startRevokeEnv(t, store)
	for _, e := range revokeEdges {
		for _, action := range []string{"revoke", "rotate"} {
			// idle: nothing is posted until the stream has ended, so that only the revocation
			// can have ended it (the latency quoted); busy: a post follows the revocation at
			// once, racing it to the reader.
			for _, mode := range []string{"idle", "busy"} {
				t.Run(e.name+"/"+action+"/"+mode, func(t *testing.T) { revokeOne(t, env, e, action, mode) })
			}
		}
	}
}

func revokeOne(t *testing.T, env *revokeEnv, e edge, action, mode string) {
	store := env.store
	seat := e.name + "-" + action + "-" + mode
	token := env.a.AddSeat(t, "rv", seat, "agent")
	env.post(t, "before "+seat)
	after := env.lastSeq(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	lb := e.open(t, ctx, env.b, token, after)
	if e.name == "sse" || e.name == "web" {
		// The stream delivers while the token is good.
		env.post(t, "while good "+seat)
		lb.waitFor(t, "while good "+seat)
		after = env.lastSeq(t)
	}

	start := time.Now()
	at, newToken := env.end(t, action, seat)
	marker := "after " + action + " " + seat
	if mode == "busy" {
		env.post(t, marker)
	}
	endAt, ok := lb.ended(env.bound + 3*time.Second)
	if !ok {
		t.Fatalf("%s: the %s outlived its %sd token by more than %v:\n%s", store, e.name, action, env.bound+3*time.Second, lb)
	}
	d := endAt.Sub(at)
	t.Logf("%s %s %s %s: ended %v after the %s returned (%v after it was sent)", store, e.name, action, mode,
		d.Round(time.Millisecond), action, endAt.Sub(start).Round(time.Millisecond))
	if d > env.bound {
		t.Errorf("%s: the %s ended %v after the %s, over the bound of %v", store, e.name, d, action, env.bound)
	}
	if mode == "idle" {
		env.post(t, marker)
	}
	// Another post, once the first has surely reached every reader.
	env.post(t, marker+" later")
	time.Sleep(200 * time.Millisecond)
	got := lb.String()
	if strings.Contains(got, marker) {
		t.Errorf("%s: the %s delivered a message posted after the %s:\n%s", store, e.name, action, got)
	}
	switch e.name {
	case "sse", "web":
		if !strings.Contains(got, ": the token of seat "+seat+" was "+action+"d") {
			t.Errorf("%s: the %s did not end with a comment saying why:\n%s", store, e.name, got)
		}
	case "mcp-read-wait":
		if !strings.Contains(got, "unauthorized: the token of seat "+seat+" was "+action+"d") {
			t.Errorf("%s: the waiting read did not answer why it ended: %s", store, got)
		}
	}
	e.check(t, env, token, newToken, after, marker)
	if lb.sid != "" && newToken != "" {
		// The old token's session is gone: its seat's new token gets the SDK's 404.
		resp, err := mcpPost(t.Context(), env.b.URL+"/mcp", newToken, lb.sid, map[string]any{"jsonrpc": "2.0", "id": 9, "method": "tools/list"})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(b), "session not found") {
			t.Errorf("the old token's MCP session with the new token: %d %s, want 404 session not found", resp.StatusCode, b)
		}
	}
}

// TestRevokeSlowReader: a client that stopped reading its event stream, so that the server's
// writes to it block, cannot keep a revoked token's stream open: the server drops it within
// the bound although the client reads nothing.
func TestRevokeSlowReader(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { revokeSlowReader(t, startRevokeEnv(t, "sqlite")) })
	t.Run("postgres", func(t *testing.T) { revokeSlowReader(t, startRevokeEnv(t, "postgres")) })
}

func revokeSlowReader(t *testing.T, env *revokeEnv) {
	token := env.a.AddSeat(t, "rv", "slow", "agent")
	var d net.Dialer
	d.Control = func(_, _ string, c syscall.RawConn) error {
		// A small receive window, so that a few megabytes fill the path to the client.
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}
	conn, err := d.DialContext(t.Context(), "tcp", strings.TrimPrefix(env.b.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /v1/rooms/rv/events?after=0 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", token)
	streams := func() string {
		r := env.b.Call(t, "GET", "/metrics", "", nil)
		for _, l := range strings.Split(string(r.Body), "\n") {
			if v, ok := strings.CutPrefix(l, `parley_open_streams{edge="api"} `); ok {
				return v
			}
		}
		return "?"
	}
	// Fill the stream until the server's writes block: more than the socket buffers hold.
	line := strings.Repeat("x", 99)
	lines := make([]string, 400)
	for i := range lines {
		lines[i] = "fact " + line
	}
	for i := range 150 {
		body := fmt.Sprintf("v1 note rv to all n=%d\nfact slow %d\n%s\n", len(lines)+1, i, strings.Join(lines, "\n"))
		if r := env.a.Call(t, "POST", "/v1/rooms/rv/messages", env.w, []byte(body)); r.Status != http.StatusCreated {
			t.Fatalf("post %d: %s", i, r)
		}
	}
	if got := streams(); got != "1" {
		t.Fatalf("open streams on the server before the revocation: %s, want 1", got)
	}
	at, _ := env.end(t, "revoke", "slow")
	for {
		if streams() == "0" {
			t.Logf("%s: the stream of a client that reads nothing ended %v after the revoke", env.store, time.Since(at).Round(time.Millisecond))
			break
		}
		if time.Since(at) > env.bound {
			t.Fatalf("%s: the stream of a client that reads nothing is still open %v after the revoke", env.store, env.bound)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
