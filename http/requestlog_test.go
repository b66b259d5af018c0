package http_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	phttp "github.com/parleyhq/parley/http"
	"github.com/parleyhq/parley/internal/lockedbuf"
	"github.com/parleyhq/parley/room"
	"github.com/parleyhq/parley/sqlite"
)

// TestRequestLog checks what the request log learns from the handlers: the seat of an
// authenticated request (a post, a gzipped history read), the error code
// of a refused one, and the route's status.
func TestRequestLog(t *testing.T) {
	store, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var out lockedbuf.Buffer
	log := slog.New(slog.NewTextHandler(&out, nil))
	svc, err := room.New(store, room.Config{AdminToken: adminToken, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(phttp.NewServer(svc, phttp.WithLogger(log), phttp.WithRenderer(room.Renderer{})))
	defer ts.Close()
	tok := benchRoom(t, ts.URL)
	call := func(method, path, token, body string, header ...string) {
		req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	line := func(path string) string {
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.Contains(l, "msg=request") && strings.Contains(l, "path="+path+" ") {
				return l
			}
		}
		t.Fatalf("no request line for %s in:\n%s", path, out.String())
		return ""
	}
	call("POST", "/v1/rooms/bench/messages", tok, "v1 note limiter to all n=1\nfact one\n")
	if l := line("/v1/rooms/bench/messages"); !strings.Contains(l, "status=201") || !strings.Contains(l, "seat=bench/lead") || strings.Contains(l, "error=") {
		t.Errorf("a stored post: %s", l)
	}
	call("GET", "/v1/rooms/bench/history", tok, "", "Accept-Encoding", "gzip")
	if l := line("/v1/rooms/bench/history"); !strings.Contains(l, "status=200") || !strings.Contains(l, "seat=bench/lead") {
		t.Errorf("a gzipped history read: %s", l)
	}
	call("GET", "/v1/rooms/nowhere/history", tok, "", "Accept-Encoding", "gzip")
	if l := line("/v1/rooms/nowhere/history"); !strings.Contains(l, "status=403") || !strings.Contains(l, "error=forbidden") || !strings.Contains(l, "seat=bench/lead") {
		t.Errorf("another room's history: %s", l)
	}
	call("POST", "/v1/rooms/bench/messages", "pk_not-a-token", "x")
	if l := line("/v1/rooms/bench/messages"); !strings.Contains(out.String(), "error=unauthorized") {
		t.Errorf("a bad token: %s\n%s", l, out.String())
	}
}
