package loadbench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/client"
	phttp "github.com/parleyhq/parley/http"
	"github.com/parleyhq/parley/room"
	"github.com/parleyhq/parley/sqlite"
)

// TestPoster posts through the bench's poster to the real server on a loopback port and
// checks what the server stored and answered against the ordinary client's view of it.
func TestPoster(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	log := slog.New(slog.DiscardHandler)
	svc, err := room.New(st, room.Config{AdminToken: "admin-token-for-the-test", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := phttp.NewHTTPServer("127.0.0.1:0", phttp.NewServer(svc, phttp.WithLogger(log)), log)
	var accepted atomic.Int64
	srv.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			accepted.Add(1)
		}
	}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	hc := &http.Client{Transport: &http.Transport{}}
	admin, err := client.New(base, "admin-token-for-the-test", client.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CreateRoomJSON(ctx, nil, "r", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := admin.AddSeat(ctx, nil, "r", "s01", parley.RoleAgent); err != nil {
		t.Fatal(err)
	}
	_, tok, err := admin.AddSeat(ctx, nil, "r", "s00", parley.RoleAgent)
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPoster(base, "r", tok)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		p.buf = loadPostTo(p.buf[:0], i, "s00", "s01")
		seq, err := p.post(ctx, p.buf)
		if err != nil || seq != int64(i) {
			t.Fatalf("post %d: seq %d, %v", i, seq, err)
		}
	}
	// The server stored the bodies as sent, under the seat of the token.
	hist, _, err := admin.WithToken(tok).History(ctx, nil, "r", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := string(loadPostTo(nil, 2, "s00", "s01")); !strings.Contains(string(hist), "#2 s00 ") || !strings.Contains(string(hist), want) {
		t.Errorf("history lacks post 2 as sent:\n%s", hist)
	}
	// A refusal comes back as the server's error, as the client decodes it.
	p.buf = loadPostTo(p.buf[:0], 2, "s00", "s01")
	if _, err := p.post(ctx, p.buf); parley.ErrorCode(err) != parley.ECONFLICT || !strings.Contains(err.Error(), "repeats your message #2") {
		t.Errorf("a repeat: %v, want the server's ECONFLICT", err)
	}
	if _, err := p.post(ctx, []byte("hello\n")); parley.ErrorCode(err) != parley.EINVALID {
		t.Errorf("plain text in a strict room: %v, want EINVALID", err)
	}
	// Every post was acknowledged in full: a refusal too leaves the connection ready for the
	// next request, which reuses it rather than dialling again. The server counts the
	// connections it accepted.
	conn := p.conn
	p.buf = loadPostTo(p.buf[:0], 4, "s00", "s01")
	if seq, err := p.post(ctx, p.buf); err != nil || seq != 4 || p.conn != conn || conn == nil {
		t.Errorf("post 4: seq %d, %v; a new connection %v, want the kept one", seq, err, p.conn != conn)
	}
	if n := accepted.Load(); n != 2 { // the admin client's, and the poster's one
		t.Errorf("the server accepted %d connections, want 2", n)
	}
	// A connection that breaks fails the post that meets it (it is never sent again by
	// itself); the next post dials anew.
	p.conn.Close()
	p.buf = loadPostTo(p.buf[:0], 5, "s00", "s01")
	if _, err := p.post(ctx, p.buf); err == nil {
		t.Errorf("post 5 on a closed connection: no error")
	}
	p.buf = loadPostTo(p.buf[:0], 6, "s00", "s01")
	if seq, err := p.post(ctx, p.buf); err != nil || seq != 5 {
		t.Errorf("post 6 after a broken connection: seq %d, %v; want 5", seq, err)
	}
	if n := accepted.Load(); n != 3 {
		t.Errorf("the server accepted %d connections, want 3", n)
	}
	// A context that ends first stops the post with its error.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := p.post(cctx, p.buf); err != context.Canceled {
		t.Errorf("post with a cancelled context: %v", err)
	}
	p.Close()
}

// TestLeadingSeq checks the answer's seq read on hand-worked answers: the server's own shape
// is read, anything else is left to encoding/json (ok false).
func TestLeadingSeq(t *testing.T) {
	for _, c := range []struct {
		in  string
		seq int64
		ok  bool
	}{
		{`{"seq":1,"tokens":40,"notes":[],"warnings":[]}` + "\n", 1, true},
		{`{"seq":9876543210,"tokens":4}`, 9876543210, true},
		{`{"seq":17}`, 17, true},
		{`{"seq":0,"tokens":4}`, 0, false},        // not a seq
		{`{"seq":012,"tokens":4}`, 0, false},      // not JSON
		{`{"seq":-3,"tokens":4}`, 0, false},       // negative
		{`{"seq":1.5,"tokens":4}`, 0, false},      // not whole
		{`{"seq": 12,"tokens":4}`, 0, false},      // valid, but another shape: decoded in full
		{`{"tokens":4,"seq":12}`, 0, false},       // likewise
		{`{"seq":12`, 0, false},                   // cut short
		{`{"seq":1234567890123456789}`, 0, false}, // 19 digits: left to encoding/json
		{`{"seq":123456789012345678}`, 123456789012345678, true},
	} {
		seq, ok := leadingSeq([]byte(c.in))
		if seq != c.seq && ok || ok != c.ok {
			t.Errorf("leadingSeq(%s) = %d, %v; want %d, %v", c.in, seq, ok, c.seq, c.ok)
		}
	}
}

// FuzzLeadingSeq compares the fast read with encoding/json's reading of the answer's first
// field: whenever leadingSeq reads a seq from valid JSON, the first key is "seq" and its value
// is that number.
func FuzzLeadingSeq(f *testing.F) {
	for _, s := range []string{`{"seq":1,"tokens":40,"notes":[],"warnings":[]}`, `{"seq":12}`, `{"seq":1,"seq":2}`, `{"seq":3e2}`, `{"seq":12,}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		seq, ok := leadingSeq(b)
		if !ok || !json.Valid(b) {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		open, _ := dec.Token()
		key, _ := dec.Token()
		val, err := dec.Token()
		n, _ := val.(json.Number)
		want, nerr := n.Int64()
		if open != json.Delim('{') || key != "seq" || err != nil || nerr != nil || want != seq || seq <= 0 {
			t.Fatalf("leadingSeq(%q) = %d; encoding/json reads %v %v %v (%v)", b, seq, open, key, val, err)
		}
	})
}

// TestLoadPost checks the bench's post against the same text written with fmt, for a few
// counters and seat names.
func TestLoadPost(t *testing.T) {
	for _, c := range []struct {
		i        int
		from, to string
	}{{0, "s00", "s01"}, {17, "s19", "s00"}, {123456789, "a", "bb"}, {-3, "", ""}} {
		want := fmt.Sprintf("v1 report load to %s n=4\noutcome batch %d of %s finished\ndone#1 parsed the input and wrote the summary\nev#1 run load-%d\ntodo next batch after review\n", c.to, c.i, c.from, c.i)
		if got := string(loadPostTo([]byte("kept:"), c.i, c.from, c.to)); got != "kept:"+want {
			t.Errorf("loadPostTo(%d, %q, %q) = %q, want %q", c.i, c.from, c.to, got, "kept:"+want)
		}
	}
}
