package mcp_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyhq/parley/mcp"
)

// rawCall posts one JSON-RPC request on an existing session, as a client that kept the
// session id would, and returns the status and body.
func (f *fixture) rawCall(t *testing.T, seat, sid string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", f.url+"/mcp", bytes.NewReader([]byte(`{"jsonrpc":"2.0","id":99,"method":"tools/list"}`)))
	req.Header.Set("Authorization", "Bearer "+f.tokens[seat])
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err.Error()
	}
	return resp.StatusCode, string(b)
}

func whoami(cs *sdk.ClientSession) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if err == nil && res.IsError {
		err = errors.New("tool error")
	}
	return err
}

// TestSessionBound: a seat at its bound that opens one more session loses its least recently
// used one, which then answers 404 "session not found"; other seats are not affected.
func TestSessionBound(t *testing.T) {
	f := newFixture(t, mcp.MaxSessions(3))
	s1, s2, s3 := f.connect(t, "ana"), f.connect(t, "ana"), f.connect(t, "ana")
	for _, cs := range []*sdk.ClientSession{s2, s3, s1} { // s2 is now the least recently used
		if err := whoami(cs); err != nil {
			t.Fatalf("whoami: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	s4 := f.connect(t, "ana")
	for i, cs := range []*sdk.ClientSession{s1, s3, s4} {
		if err := whoami(cs); err != nil {
			t.Errorf("session %d after the fourth opened: %v", i, err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		status, body := f.rawCall(t, "ana", s2.ID())
		if status == http.StatusNotFound && strings.Contains(body, "session not found") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the least recently used session still answers: %d %s", status, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The client learns it from its standing stream ending or from the 404; either way it
	// fails the call at once rather than hang (the stdio bridge then opens a new session).
	if err := whoami(s2); !errors.Is(err, sdk.ErrSessionMissing) && !errors.Is(err, sdk.ErrConnectionClosed) {
		t.Errorf("the evicted session's client: %v, want ErrSessionMissing or ErrConnectionClosed", err)
	}
	// Another seat of the room has a bound of its own.
	for range 3 {
		if err := whoami(f.connect(t, "bo")); err != nil {
			t.Errorf("bo: %v", err)
		}
	}
	if err := whoami(s1); err != nil {
		t.Errorf("ana's session after bo opened three: %v", err)
	}
}

// TestSessionBoundBusy: when every session of a seat at its bound has a call in flight, none
// is closed under it: the new session is refused, with a message that says why.
func TestSessionBoundBusy(t *testing.T) {
	f := newFixture(t, mcp.MaxSessions(1))
	s1 := f.connect(t, "ana")
	done := make(chan error, 1)
	go func() {
		_, err := s1.CallTool(t.Context(), &sdk.CallToolParams{Name: "read", Arguments: map[string]any{"wait": 2}})
		done <- err
	}()
	time.Sleep(300 * time.Millisecond) // the read is waiting
	hc := &http.Client{Transport: bearer{token: f.tokens["ana"]}}
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil)
	_, err := client.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: f.url + "/mcp", HTTPClient: hc, MaxRetries: -1}, nil)
	if err == nil || !strings.Contains(err.Error(), "too many MCP sessions") {
		t.Errorf("a second session while the only one is busy: %v", err)
	}
	if err := <-done; err != nil {
		t.Errorf("the busy session's read: %v", err)
	}
	// Idle now: a new session takes its place.
	s2 := f.connect(t, "ana")
	if err := whoami(s2); err != nil {
		t.Errorf("a new session once the old one is idle: %v", err)
	}
}

// TestSessionIdleExpiry: a session without requests for the idle timeout is closed and then
// answers 404 "session not found"; a call in flight keeps its session open.
func TestSessionIdleExpiry(t *testing.T) {
	f := newFixture(t, mcp.SessionTimeout(400*time.Millisecond))
	busy := f.connect(t, "ana")
	idle := f.connect(t, "bo")
	if err := whoami(idle); err != nil {
		t.Fatal(err)
	}
	res, err := busy.CallTool(t.Context(), &sdk.CallToolParams{Name: "read", Arguments: map[string]any{"wait": 1}})
	if err != nil || res.IsError {
		t.Fatalf("a read waiting longer than the idle timeout: %v %+v", err, res)
	}
	if err := whoami(busy); err != nil {
		t.Errorf("the session whose read outlasted the idle timeout: %v", err)
	}
	status, body := f.rawCall(t, "bo", idle.ID())
	if status != http.StatusNotFound || !strings.Contains(body, "session not found") {
		t.Errorf("a session idle past the timeout: %d %s, want 404 session not found", status, body)
	}
}

// TestRevokeEndsReadWait: revoking a seat answers its waiting read at once, saying why, and
// then closes its session.
func TestRevokeEndsReadWait(t *testing.T) {
	f := newFixture(t)
	ana := f.connect(t, "ana")
	type answer struct {
		res *sdk.CallToolResult
		err error
		at  time.Time
	}
	done := make(chan answer, 1)
	go func() {
		res, err := ana.CallTool(t.Context(), &sdk.CallToolParams{Name: "read", Arguments: map[string]any{"wait": 30}})
		done <- answer{res, err, time.Now()}
	}()
	time.Sleep(300 * time.Millisecond) // the read is waiting
	if err := f.svc.RevokeSeat(t.Context(), f.admin, "limiter", "ana"); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	var a answer
	select {
	case a = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting read outlived its seat's revocation by 5s")
	}
	if d := a.at.Sub(revoked); d > time.Second {
		t.Errorf("the waiting read answered %v after the revocation", d)
	}
	if a.err != nil || !a.res.IsError || !strings.Contains(textOf(a.res), "unauthorized: the token of seat ana was revoked") {
		t.Errorf("the waiting read's answer: %v %+v", a.err, a.res)
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		status, body := f.rawCall(t, "bo", ana.ID())
		// bo is not ana: the SDK refuses another seat on a live session (403) and answers
		// 404 once the session is gone.
		if status == http.StatusNotFound && strings.Contains(body, "session not found") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the revoked seat's session is still open: %d %s", status, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func textOf(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
