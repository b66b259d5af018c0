package http_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	phttp "github.com/parleyhq/parley/http"
	"github.com/parleyhq/parley/internal/sqlitetest"
	"github.com/parleyhq/parley/room"
)

// gunzip returns the decompressed body of a response that says Content-Encoding: gzip, and
// the body as it is otherwise.
func gunzip(t *testing.T, r response) []byte {
	t.Helper()
	if r.header.Get("Content-Encoding") != "gzip" {
		return r.body
	}
	zr, err := gzip.NewReader(bytes.NewReader(r.body))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gzip body: %v", err)
	}
	return b
}

func varies(h http.Header, name string) bool {
	for _, v := range h.Values("Vary") {
		for _, f := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), name) {
				return true
			}
		}
	}
	return false
}

// TestCompressedReads: history, messages, inbox and state are gzipped for a client that
// accepts it, and decompress to exactly the bytes a client that does not gets; both say Vary:
// Accept-Encoding; a compressed body's Content-Length is never the uncompressed one, a plain
// history page keeps its own; a small body goes out as it is.
func TestCompressedReads(t *testing.T) {
	s := newCountedServer(t)
	// A state record for the topic, so that the state route answers 200.
	if _, err := s.svc.Post(t.Context(), mustAuth(t, s, "lead"), "team", []byte("v1 decision limiter to all n=1\nchoice Redis\n"), ""); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path  string
		large bool // over the compression threshold
	}{
		{"/v1/rooms/team/history?after=50&limit=100", true}, // a full page (the page cache's)
		{"/v1/rooms/team/history?after=150", true},          // the tail, read afresh
		{"/v1/rooms/team/history?after=200", false},         // one small message
		{"/v1/rooms/team/messages?after=0", true},
		{"/v1/rooms/team/inbox", false},
		{"/v1/rooms/team/state/limiter", false},
	} {
		plain := do(t, s.ts, "GET", tc.path, s.tokens["lead"], "", "Accept-Encoding", "identity")
		zipped := do(t, s.ts, "GET", tc.path, s.tokens["lead"], "", "Accept-Encoding", "br;q=1.0, gzip;q=0.8")
		if plain.status != 200 || zipped.status != 200 {
			t.Fatalf("%s: %d, %d %s", tc.path, plain.status, zipped.status, zipped.body)
		}
		if plain.header.Get("Content-Encoding") != "" {
			t.Errorf("%s: compressed for a client that did not ask", tc.path)
		}
		if got := zipped.header.Get("Content-Encoding") == "gzip"; got != tc.large {
			t.Errorf("%s: gzipped %v (%d bytes), want %v", tc.path, got, len(plain.body), tc.large)
		}
		if !varies(plain.header, "Accept-Encoding") || !varies(zipped.header, "Accept-Encoding") {
			t.Errorf("%s: Vary %v / %v", tc.path, plain.header.Values("Vary"), zipped.header.Values("Vary"))
		}
		if strings.Contains(tc.path, "inbox") || strings.Contains(tc.path, "state") {
			if !varies(zipped.header, "Accept") {
				t.Errorf("%s: lost Vary: Accept: %v", tc.path, zipped.header.Values("Vary"))
			}
		}
		if b := gunzip(t, zipped); !bytes.Equal(b, plain.body) {
			t.Errorf("%s: the gzipped body decompresses to other bytes (%d vs %d)", tc.path, len(b), len(plain.body))
		}
		if tc.large {
			// Only a length that is known: net/http's own, of the compressed bytes, when the
			// whole body fitted its buffer.
			if cl := zipped.header.Get("Content-Length"); cl != "" && cl != fmt.Sprint(len(zipped.body)) {
				t.Errorf("%s: gzipped %d bytes with Content-Length %s", tc.path, len(zipped.body), cl)
			}
			if len(zipped.body)*2 > len(plain.body) {
				t.Errorf("%s: gzip %d bytes of %d", tc.path, len(zipped.body), len(plain.body))
			}
		}
		if strings.Contains(tc.path, "limit=100") && zipped.header.Get("Content-Length") != fmt.Sprint(len(zipped.body)) {
			// A full page's gzip is kept, so its length is known.
			t.Errorf("%s: the full page's gzip has Content-Length %q for %d bytes", tc.path, zipped.header.Get("Content-Length"), len(zipped.body))
		}
		if strings.Contains(tc.path, "history") && plain.header.Get("Content-Length") != fmt.Sprint(len(plain.body)) {
			t.Errorf("%s: plain Content-Length %q for %d bytes", tc.path, plain.header.Get("Content-Length"), len(plain.body))
		}
	}
}

func mustAuth(t *testing.T, s *countedServer, seat string) *parley.Caller {
	t.Helper()
	c, err := s.svc.Authenticate(t.Context(), s.tokens[seat])
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCompressedETags: the gzip representation of a history page has its own ETag (the
// identity one with -gzip), each revalidates to 304 with its own tag (weak or strong, or in a
// list), the other's tag does not, and the page cache's second answer is the same.
func TestCompressedETags(t *testing.T) {
	s := newCountedServer(t)
	const path = "/v1/rooms/team/history?after=50&limit=100"
	plain := do(t, s.ts, "GET", path, s.tokens["lead"], "", "Accept-Encoding", "identity")
	zipped := do(t, s.ts, "GET", path, s.tokens["lead"], "", "Accept-Encoding", "gzip")
	pe, ze := plain.header.Get("ETag"), zipped.header.Get("ETag")
	if !strings.HasPrefix(pe, `"`) || ze != strings.TrimSuffix(pe, `"`)+`-gzip"` {
		t.Fatalf("ETags %s and %s", pe, ze)
	}
	again := do(t, s.ts, "GET", path, s.tokens["builder"], "", "Accept-Encoding", "gzip")
	if again.header.Get("ETag") != ze || !bytes.Equal(gunzip(t, again), plain.body) {
		t.Errorf("the cached page gzipped: ETag %s", again.header.Get("ETag"))
	}
	for _, tc := range []struct {
		enc, inm string
		want     int
	}{
		{"gzip", ze, 304},
		{"gzip", "W/" + ze, 304},
		{"gzip", `"other", ` + ze, 304},
		{"identity", pe, 304},
		{"gzip", pe, 200},
		{"identity", ze, 200},
		{"gzip;q=0", pe, 304}, // gzip refused: the identity representation
	} {
		r := do(t, s.ts, "GET", path, s.tokens["lead"], "", "Accept-Encoding", tc.enc, "If-None-Match", tc.inm)
		if r.status != tc.want {
			t.Errorf("Accept-Encoding %s, If-None-Match %s: %d, want %d", tc.enc, tc.inm, r.status, tc.want)
		}
		if r.status == 304 && r.header.Get("ETag") != strings.TrimPrefix(tc.inm[strings.LastIndex(tc.inm, " ")+1:], "W/") {
			t.Errorf("304 with ETag %s for If-None-Match %s", r.header.Get("ETag"), tc.inm)
		}
		if r.status == 304 && (len(r.body) != 0 || !varies(r.header, "Accept-Encoding")) {
			t.Errorf("304: body %q, Vary %v", r.body, r.header.Values("Vary"))
		}
	}
	head := do(t, s.ts, "HEAD", path, s.tokens["lead"], "", "Accept-Encoding", "gzip")
	if head.status != 200 || head.header.Get("Content-Encoding") != "gzip" || head.header.Get("ETag") != ze || len(head.body) != 0 {
		t.Errorf("HEAD: %d %v", head.status, head.header)
	}
}

// TestCompressedEvents: a gzipped event stream delivers each event when it is sent (the
// compressor is flushed after every event), and its decompressed bytes are the plain
// stream's.
func TestCompressedEvents(t *testing.T) {
	s := newCountedServer(t)
	open := func(enc string) (*http.Response, *bufio.Reader) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		t.Cleanup(cancel)
		req, _ := http.NewRequestWithContext(ctx, "GET", s.ts.URL+"/v1/rooms/team/events?after=195", nil)
		req.Header.Set("Authorization", "Bearer "+s.tokens["builder"])
		req.Header.Set("Accept-Encoding", enc)
		resp, err := s.ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		var r io.Reader = resp.Body
		if resp.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			r = zr
		}
		return resp, bufio.NewReader(r)
	}
	presp, plain := open("identity")
	zresp, zipped := open("gzip")
	if presp.Header.Get("Content-Encoding") != "" || zresp.Header.Get("Content-Encoding") != "gzip" || !varies(zresp.Header, "Accept-Encoding") {
		t.Fatalf("headers: %v / %v", presp.Header, zresp.Header)
	}
	// readEvent reads through the blank line that ends the event with the given id.
	readEvent := func(br *bufio.Reader, seq int64) string {
		t.Helper()
		var b strings.Builder
		seen := false
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("waiting for event %d: %v after %q", seq, err, b.String())
			}
			b.WriteString(line)
			if line == fmt.Sprintf("id: %d\n", seq) {
				seen = true
			}
			if seen && line == "\n" {
				return b.String()
			}
		}
	}
	var ps, zs []string
	for seq := int64(196); seq <= 200; seq++ {
		ps, zs = append(ps, readEvent(plain, seq)), append(zs, readEvent(zipped, seq))
	}
	lead := mustAuth(t, s, "lead")
	for i := range 3 {
		res, err := s.svc.Post(t.Context(), lead, "team", []byte(fmt.Sprintf("v1 note limiter to all n=1\noutcome live %d\n", i)), "")
		if err != nil {
			t.Fatal(err)
		}
		// Each live event arrives before the next post.
		ps, zs = append(ps, readEvent(plain, res.Seq)), append(zs, readEvent(zipped, res.Seq))
	}
	if strings.Join(ps, "") != strings.Join(zs, "") {
		t.Errorf("the gzipped stream differs:\n%s\n---\n%s", strings.Join(zs, ""), strings.Join(ps, ""))
	}
}

// TestHistoryCompressionRatio measures gzip on a history page of a 1,000-message room whose
// messages are the study's convention texts (bench/study), each with its own seq, time and
// a varied line, and checks the page shrinks by at least half.
func TestHistoryCompressionRatio(t *testing.T) {
	var texts []string
	for _, p := range []string{"p1", "p2", "p3"} {
		b, err := os.ReadFile(filepath.Join("..", "bench", "study", p, "convention.txt"))
		if err != nil {
			t.Skipf("study fixtures: %v", err)
		}
		texts = append(texts, string(b))
	}
	store := sqlitetest.Open(t)
	log := slog.New(slog.DiscardHandler)
	svc, err := room.New(store, room.Config{AdminToken: adminToken, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	admin, _ := svc.Authenticate(t.Context(), adminToken)
	if _, err := svc.CreateRoom(t.Context(), admin, "study", nil); err != nil {
		t.Fatal(err)
	}
	_, tok, err := svc.AddSeat(t.Context(), admin, "study", "reader", parley.RoleAgent)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	seats := []string{"lead", "builder", "reviewer", "ops"}
	for i := range 1000 {
		body := texts[i%len(texts)] + fmt.Sprintf("note run %d took %dms on worker-%d\n", i, 100+i*37%900, i%13)
		h := sha256.Sum256([]byte(body))
		if _, err := store.Append(t.Context(), &parley.Append{Message: &parley.Message{
			Room: "study", Seat: seats[i%len(seats)], Time: at.Add(time.Duration(i*47) * time.Second),
			Format: parley.FormatConvention, Topic: "limiter", Body: body, Tokens: 100, Hash: h[:]}}); err != nil {
			t.Fatal(err)
		}
	}
	ts := httptest.NewServer(phttp.NewServer(svc, phttp.WithLogger(log)))
	t.Cleanup(ts.Close)
	var plainTotal, zipTotal int
	pages := 0
	for after := "0"; after != ""; pages++ {
		path := "/v1/rooms/study/history?after=" + after
		plain := do(t, ts, "GET", path, tok, "", "Accept-Encoding", "identity")
		zipped := do(t, ts, "GET", path, tok, "", "Accept-Encoding", "gzip")
		if !bytes.Equal(gunzip(t, zipped), plain.body) {
			t.Fatalf("page after=%s decompresses to other bytes", after)
		}
		plainTotal += len(plain.body)
		zipTotal += len(zipped.body)
		after = plain.header.Get(phttp.NextAfterHeader)
	}
	ratio := float64(plainTotal) / float64(zipTotal)
	// The three study texts repeat within gzip's 32 KiB window, so this ratio is an upper
	// bound: transcripts of real agent conversations give 5 to 6.
	t.Logf("1,000 study messages, %d history pages: %d bytes plain, %d gzipped: ratio %.2f", pages, plainTotal, zipTotal, ratio)
	if ratio < 2 {
		t.Errorf("compression ratio %.2f", ratio)
	}
}

// TestCompressedUI: a handler mounted on "/" (the web UI) has its text responses gzipped, and
// not its images, small responses or byte ranges.
func TestCompressedUI(t *testing.T) {
	page := strings.Repeat("<p>a page of the transcript</p>\n", 100)
	ui := http.NewServeMux()
	ui.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	})
	ui.HandleFunc("/small", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Length", "3")
		io.WriteString(w, "hi\n")
	})
	ui.HandleFunc("/image", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		io.WriteString(w, page)
	})
	ui.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "f.css", time.Time{}, strings.NewReader(page))
	})
	srv := phttp.NewServer(authOnly(), phttp.WithLogger(slog.New(slog.DiscardHandler)))
	srv.Handle("/", ui)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	for _, tc := range []struct {
		path  string
		hdr   []string
		gzip  bool
		plain string
	}{
		{"/page", nil, true, page},
		{"/small", nil, false, "hi\n"},
		{"/image", nil, false, page},
		{"/file", nil, true, page},
		{"/file", []string{"Range", "bytes=0-9"}, false, page[:10]},
	} {
		r := do(t, ts, "GET", tc.path, "", "", append([]string{"Accept-Encoding", "gzip"}, tc.hdr...)...)
		if r.status != 200 && r.status != 206 {
			t.Fatalf("%s: %d", tc.path, r.status)
		}
		if got := r.header.Get("Content-Encoding") == "gzip"; got != tc.gzip {
			t.Errorf("%s %v: gzipped %v, want %v", tc.path, tc.hdr, got, tc.gzip)
		}
		if tc.gzip && r.header.Get("Accept-Ranges") != "" {
			t.Errorf("%s: gzipped with Accept-Ranges", tc.path)
		}
		if b := gunzip(t, r); string(b) != tc.plain {
			t.Errorf("%s: body %q", tc.path, b[:min(len(b), 40)])
		}
	}
}
