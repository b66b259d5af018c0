package loadbench

import (
	"bytes"
	"context"
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
		// The server's real answer is the shape read without the JSON decoder, and
		// encoding/json reads the same seq from it.
		ans := p.resp.Bytes()
		if fast, ok := plainAnswer(ans); !ok || fast != seq {
			t.Errorf("post %d: the server answered %q, which the fast read does not take (%d, %v): "+
				"if the answer's shape changed, change plainAnswer with it", i, ans, fast, ok)
		}
		if want, ok := clientSeq(ans); !ok || want != seq {
			t.Errorf("post %d: encoding/json reads %d, %v from %q", i, want, ok, ans)
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
	// An answer with a warning, from a room that takes plain text: read by encoding/json,
	// with the same seq as the client reads.
	if _, err := admin.CreateRoomJSON(ctx, nil, "lenient", []byte(`{"format":"lenient"}`)); err != nil {
		t.Fatal(err)
	}
	_, ltok, err := admin.AddSeat(ctx, nil, "lenient", "s00", parley.RoleAgent)
	if err != nil {
		t.Fatal(err)
	}
	lp, err := newPoster(base, "lenient", ltok)
	if err != nil {
		t.Fatal(err)
	}
	defer lp.Close()
	seq, err := lp.post(ctx, []byte("hello\n"))
	ans := lp.resp.Bytes()
	if _, plain := plainAnswer(ans); err != nil || seq != 1 || plain || !bytes.Contains(ans, []byte(`"plain-text"`)) {
		t.Errorf("a post with a warning: seq %d, %v; answer %q (plain %v), want seq 1 with the warning", seq, err, ans, plain)
	}
	if want, ok := clientSeq(ans); !ok || want != seq {
		t.Errorf("encoding/json reads %d, %v from %q", want, ok, ans)
	}
	// A context that ends first stops the post with its error.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := p.post(cctx, p.buf); err != context.Canceled {
		t.Errorf("post with a cancelled context: %v", err)
	}
	p.Close()
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
