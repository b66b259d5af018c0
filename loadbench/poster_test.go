package loadbench

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
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
	p, err := newPoster(hc.Transport, base, "r", tok)
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
	// Every post was acknowledged in full: the connection went back to the pool, and the
	// next request reuses it rather than dialling again.
	var dials int
	hc.Transport.(*http.Transport).DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials++
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	p.buf = loadPostTo(p.buf[:0], 4, "s00", "s01")
	if _, err := p.post(ctx, p.buf); err != nil || dials != 0 {
		t.Errorf("post 4: %v after %d new dials, want the pooled connection", err, dials)
	}
}
