package client_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/client"
	"github.com/parleyhq/parley/internal/servertest"
	"github.com/parleyhq/parley/internal/version"
)

// fixture is a real server with a room "team", an admin client and seats lead and yu.
type fixture struct {
	srv       *servertest.Server
	admin     *client.Client
	lead, yu  *client.Client
	leadToken string
}

func newFixture(t *testing.T, policy string) *fixture {
	t.Helper()
	s := servertest.InProcess(t, servertest.InProcessOptions{})
	admin, err := client.New(s.URL, s.Admin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CreateRoomJSON(t.Context(), nil, "team", json.RawMessage(policy)); err != nil {
		t.Fatal(err)
	}
	f := &fixture{srv: s, admin: admin}
	for _, name := range []string{"lead", "yu"} {
		_, tok, err := admin.AddSeat(t.Context(), nil, "team", name, parley.RoleAgent)
		if err != nil {
			t.Fatal(err)
		}
		if name == "lead" {
			f.lead, f.leadToken = admin.WithToken(tok), tok
		} else {
			f.yu = admin.WithToken(tok)
		}
	}
	return f
}

// raw returns the server's own JSON for a GET, as the client received it.
func raw(t *testing.T, c *client.Client, path string) []byte {
	t.Helper()
	resp, err := c.Do(t.Context(), client.Request{Method: "GET", Path: path, Header: http.Header{"Accept": {"application/json"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return b
}

// TestTypesKeepTheServersJSON: what the client decodes, encoded again, is the server's JSON
// byte for byte. The CLI prints `room show`, `inbox --json` and `state --json` that way.
func TestTypesKeepTheServersJSON(t *testing.T) {
	f := newFixture(t, `{"format":"lenient","dedup_window":"48h","seat_messages_per_minute":1.5}`)
	ctx := t.Context()
	ask, err := f.lead.Post(ctx, nil, "team", []byte("v1 propose limiter to yu n=3\nask Redis or memory, 20990918T0900Z\ndefault silence→Redis <&> \"quoted\"\nrec A\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.yu.Post(ctx, nil, "team", []byte(fmt.Sprintf("v1 answer limiter to lead re %d n=1\nRedis\n", ask.Seq)), ""); err != nil {
		t.Fatal(err)
	}
	f.yu.History(ctx, nil, "team", 0, 0)
	check := func(name string, c *client.Client, path string, v any, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, _ := json.Marshal(v)
		if want := raw(t, c, path); string(b)+"\n" != string(want) {
			t.Errorf("%s: the client's value encodes as\n%s\nthe server sent\n%s", name, b, want)
		}
	}
	room, err := f.admin.Room(ctx, nil, "team")
	check("room", f.admin, "/v1/rooms/team", room, err)
	in, err := f.lead.Inbox(ctx, nil, "team")
	check("lead's inbox", f.lead, "/v1/rooms/team/inbox", in, err)
	st, err := f.lead.State(ctx, nil, "team", "limiter")
	check("state", f.lead, "/v1/rooms/team/state/limiter", st, err)
	stats, err := f.lead.Stats(ctx, nil, "team")
	check("stats", f.lead, "/v1/rooms/team/stats", stats, err)
	if len(st.Decisions) != 1 || len(in.Open) != 0 {
		t.Errorf("state %+v, inbox %+v", st, in)
	}
}

// TestErrorsKeepTheirFields: a refusal comes back as the *parley.Error the service gave,
// its fields with the service's types.
func TestErrorsKeepTheirFields(t *testing.T) {
	f := newFixture(t, `{"seat_burst":2,"seat_messages_per_minute":1}`)
	ctx := t.Context()
	body := []byte("v1 note x to yu n=1\nfact\n")
	first, err := f.lead.Post(ctx, nil, "team", body, "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.lead.Post(ctx, nil, "team", body, "")
	var pe *parley.Error
	if !errors.As(err, &pe) || pe.Code != parley.ECONFLICT || pe.Fields["seq"] != first.Seq || pe.Hint == "" || !strings.Contains(pe.Message, "repeats") {
		t.Fatalf("repeat: %#v", err)
	}
	_, err = f.lead.Post(ctx, nil, "team", []byte("v1 note x to yu n=1\nanother\n"), "")
	if !errors.As(err, &pe) || pe.Code != parley.ERATELIMIT || pe.Fields["retry_after"] != 60 && pe.Fields["retry_after"] != 59 {
		t.Errorf("rate cap: %#v", err)
	}
	// A token the server does not know.
	if _, err := f.admin.WithToken("pk_"+strings.Repeat("x", 43)).Rooms(ctx, nil); parley.ErrorCode(err) != parley.EUNAUTHORIZED {
		t.Errorf("unknown token: %v", err)
	}
	// A caller that the client did not hand out names no token.
	if _, err := f.admin.Rooms(ctx, &parley.Caller{Admin: true}); parley.ErrorCode(err) != parley.EINVALID || !strings.Contains(err.Error(), "Authenticate") {
		t.Errorf("foreign caller: %v", err)
	}
	// An unknown route keeps the server's own code.
	_, err = f.admin.Do(ctx, client.Request{Method: "PUT", Path: "/v1/rooms/team"})
	if !errors.As(err, &pe) || pe.Code != "method_not_allowed" || pe.Hint == "" {
		t.Errorf("PUT: %#v", err)
	}
}

// TestErrorsFromSomethingElse: an answer that is not the server's JSON (a proxy's page) keeps
// its status's code and says what it said.
func TestErrorsFromSomethingElse(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		code   string
	}{
		{502, "<html>Bad Gateway</html>", parley.EINTERNAL},
		{503, "", parley.EINTERNAL},
		{429, "slow down", parley.ERATELIMIT},
		{401, `{"error":"nope"}`, parley.EUNAUTHORIZED},
		{418, "teapot", parley.EINVALID},
	} {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(tc.status)
			io.WriteString(w, tc.body)
		}))
		c, _ := client.New(ts.URL, "tok")
		_, err := c.Rooms(t.Context(), nil)
		var pe *parley.Error
		if !errors.As(err, &pe) || pe.Code != tc.code || !strings.HasPrefix(pe.Message, fmt.Sprintf("server answered %d ", tc.status)) {
			t.Errorf("%d %q: %#v", tc.status, tc.body, err)
		}
		ts.Close()
	}
	if _, err := client.New("ftp://x", ""); err == nil {
		t.Error("an ftp:// URL was accepted")
	}
}

// TestHistoryPages: HistoryRange reports the server's pages (ETag, next page), and
// HistoryAll follows them to the end.
func TestHistoryPages(t *testing.T) {
	f := newFixture(t, `{"seat_burst":100000,"seat_messages_per_minute":1e6,"room_burst":100000,"room_messages_per_minute":1e6}`)
	ctx := t.Context()
	for i := range 25 {
		if _, err := f.lead.Post(ctx, nil, "team", []byte(fmt.Sprintf("v1 note x to yu n=1\nfact %d\n", i)), ""); err != nil {
			t.Fatal(err)
		}
	}
	p, err := f.yu.HistoryRange(ctx, nil, "team", 10, 10)
	if err != nil || p.Last != 20 || p.Next != 20 || !bytes.HasPrefix(p.Body, []byte("#11 lead ")) {
		t.Fatalf("page after 10: last %d next %d, %v", p.Last, p.Next, err)
	}
	sum := sha256.Sum256(p.Body)
	if p.ETag != `"`+hex.EncodeToString(sum[:16])+`"` {
		t.Errorf("ETag %s is not the page's hash", p.ETag)
	}
	if p, err := f.yu.HistoryRange(ctx, nil, "team", 20, 10); err != nil || p.Last != 25 || p.Next != 0 {
		t.Errorf("last page: %+v, %v", p, err)
	}
	all, last, err := f.yu.HistoryAll(ctx, nil, "team", 3)
	whole, _, _ := f.yu.History(ctx, nil, "team", 3, 0)
	if err != nil || last != 25 || !bytes.Equal(all, whole) {
		t.Errorf("HistoryAll after 3: last %d, %v", last, err)
	}
	// A limit over the server's largest page is asked for as that page.
	if _, _, err := f.yu.History(ctx, nil, "team", 0, 50000); err != nil {
		t.Errorf("limit 50000: %v", err)
	}
}

// TestEvents: the raw event stream carries each message's history text, from after= on.
func TestEvents(t *testing.T) {
	f := newFixture(t, `{}`)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for i := range 2 {
		if _, err := f.lead.Post(ctx, nil, "team", []byte(fmt.Sprintf("v1 note x to yu n=1\nfact %d\n", i)), ""); err != nil {
			t.Fatal(err)
		}
	}
	ev, err := f.yu.Events(ctx, nil, "team", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	want, _, _ := f.yu.History(ctx, nil, "team", 1, 0)
	e, err := ev.Next()
	if err != nil || e.Seq != 2 || e.Text != string(want) {
		t.Fatalf("first event: %+v, %v; want #2 as history shows it", e, err)
	}
	go f.lead.Post(ctx, nil, "team", []byte("v1 note x to yu n=1\nlive\n"), "")
	if e, err := ev.Next(); err != nil || e.Seq != 3 || !strings.HasSuffix(e.Text, "\nlive\n\n") {
		t.Fatalf("live event: %+v, %v", e, err)
	}
	// Revoking the token ends the stream.
	if err := f.admin.RevokeSeat(ctx, nil, "team", "yu"); err != nil {
		t.Fatal(err)
	}
	if _, err := ev.Next(); err != io.EOF {
		t.Errorf("after revocation: %v, want io.EOF", err)
	}
	if _, err := f.yu.Events(ctx, nil, "team", 0); parley.ErrorCode(err) != parley.EUNAUTHORIZED {
		t.Errorf("events with a revoked token: %v", err)
	}
}

// TestTransportErrors: a server that is not there is a transport error, not a refusal.
func TestTransportErrors(t *testing.T) {
	c, _ := client.New("http://127.0.0.1:1", "tok")
	_, err := c.Rooms(t.Context(), nil)
	var pe *parley.Error
	if err == nil || errors.As(err, &pe) || !strings.Contains(err.Error(), "GET http://127.0.0.1:1/v1/rooms") {
		t.Errorf("no server: %v", err)
	}
}

// TestConnectionsAreReused: sequential calls share one connection (the load bench measures
// the server, not new TCP connections).
func TestConnectionsAreReused(t *testing.T) {
	f := newFixture(t, `{"seat_burst":1000,"seat_messages_per_minute":1e6}`)
	var dials atomic.Int64
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	defer tr.CloseIdleConnections()
	c, err := client.New(f.srv.URL, f.leadToken, client.WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for i := range 10 {
		if _, err := c.Post(ctx, nil, "team", []byte(fmt.Sprintf("v1 note x to yu n=1\nfact %d\n", i)), ""); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Inbox(ctx, nil, "team"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.History(ctx, nil, "team", 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("30 calls opened %d connections, want 1", n)
	}
}

// TestUserAgentNamesTheVersion: a client sends parley-client/<version>, the version `parley
// version` prints, unless WithUserAgent says otherwise.
func TestUserAgentNamesTheVersion(t *testing.T) {
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("User-Agent"))
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"rooms":[]}`))
	}))
	defer srv.Close()
	for _, c := range []struct {
		opts []client.Option
		want string
	}{
		{nil, "parley-client/" + version.String()},
		{[]client.Option{client.WithUserAgent("parley/v1.2.3")}, "parley/v1.2.3"},
	} {
		cl, err := client.New(srv.URL, "pk_x", c.opts...)
		if err != nil {
			t.Fatal(err)
		}
		cl.Rooms(t.Context(), nil)
		if ua, _ := got.Load().(string); ua != c.want {
			t.Errorf("User-Agent %q, want %q", ua, c.want)
		}
	}
}
