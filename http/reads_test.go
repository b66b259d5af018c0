package http_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/bpe"
	phttp "github.com/parleyhq/parley/http"
	"github.com/parleyhq/parley/internal/sqlitetest"
	"github.com/parleyhq/parley/internal/storecount"
	"github.com/parleyhq/parley/room"
)

// countedServer is the real room service on a real SQLite file whose calls are counted, with
// room team (seats lead, builder) and room other (seat x), and 200 messages in team stored
// straight into the store: among them one stored before the line rules (a lone CR, a line
// that looks like a header) and some with notes.
type countedServer struct {
	ts     *httptest.Server
	svc    *room.Service
	count  *storecount.Store
	admin  *parley.Caller
	tokens map[string]string
}

func newCountedServer(t *testing.T) *countedServer {
	t.Helper()
	raw := sqlitetest.Open(t)
	log := slog.New(slog.DiscardHandler)
	cs := storecount.New(raw)
	svc, err := room.New(cs, room.Config{AdminToken: adminToken, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	admin, err := svc.Authenticate(t.Context(), adminToken)
	if err != nil {
		t.Fatal(err)
	}
	s := &countedServer{svc: svc, count: cs, admin: admin, tokens: map[string]string{}}
	for rm, seats := range map[string][]string{"team": {"lead", "builder"}, "other": {"x"}} {
		if _, err := svc.CreateRoom(t.Context(), admin, rm, nil); err != nil {
			t.Fatal(err)
		}
		for _, name := range seats {
			_, tok, err := svc.AddSeat(t.Context(), admin, rm, name, parley.RoleAgent)
			if err != nil {
				t.Fatal(err)
			}
			s.tokens[name] = tok
		}
	}
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for i := range 200 {
		body := fmt.Sprintf("v1 note limiter to all n=1\noutcome step %d\n", i)
		var notes []string
		switch {
		case i == 77:
			body = "stored before the rules\rwith a lone CR\r\n#12 lead 20260101T000000Z\n! not a note\n"
		case i%9 == 0:
			notes = []string{"! ev#1 verified: run ci-1 passed", "! a note\nover two lines"}
		}
		h := sha256.Sum256([]byte(body))
		if _, err := raw.Append(t.Context(), &parley.Append{Message: &parley.Message{
			Room: "team", Seat: []string{"lead", "builder"}[i%2], Time: at.Add(time.Duration(i) * time.Second),
			Format: parley.FormatConvention, Topic: "limiter", Body: body, Tokens: 10, Hash: h[:], Notes: notes}}); err != nil {
			t.Fatal(err)
		}
	}
	s.ts = httptest.NewServer(phttp.NewServer(svc, phttp.WithLogger(log), phttp.WithHeartbeat(time.Hour)))
	t.Cleanup(s.ts.Close)
	return s
}

// TestEventsAreHistory: the event stream over the real service sends, for each message, the
// event whose data plus "\n" is that message's history text, byte for byte (the frames the
// stream sent when it read History(seq-1, 1) per message), and catching up on 200 messages
// is a few store calls, counted as the seat's read.
func TestEventsAreHistory(t *testing.T) {
	s := newCountedServer(t)
	var want bytes.Buffer
	want.WriteString("retry: 3000\n\n")
	for seq := int64(1); seq <= 200; seq++ {
		text, last, err := s.svc.History(t.Context(), s.admin, "team", seq-1, 1)
		if err != nil || last != seq {
			t.Fatal(last, err)
		}
		fmt.Fprintf(&want, "id: %d\nevent: message\n", seq)
		for _, l := range strings.Split(strings.TrimSuffix(string(text), "\n"), "\n") {
			fmt.Fprintf(&want, "data: %s\n", l)
		}
		want.WriteString("\n")
	}
	if !strings.Contains(want.String(), "data: stored before the rules[U+000D]with a lone CR\n") {
		t.Fatalf("the old body is not rendered escaped:\n%s", want.String())
	}

	s.count.Reset()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.ts.URL+"/v1/rooms/team/events?after=0", nil)
	req.Header.Set("Authorization", "Bearer "+s.tokens["builder"])
	resp, err := s.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got := make([]byte, want.Len())
	if _, err := io.ReadFull(resp.Body, got); err != nil {
		t.Fatalf("stream: %v after %q", err, got)
	}
	if !bytes.Equal(got, want.Bytes()) {
		i := 0
		for i < len(got) && got[i] == want.Bytes()[i] {
			i++
		}
		t.Fatalf("the stream differs at byte %d:\ngot  %q\nwant %q", i, got[i:min(len(got), i+200)], want.Bytes()[i:min(want.Len(), i+200)])
	}
	counts := s.count.Counts()
	t.Logf("200 events: %d store calls %v", s.count.Total(), counts)
	if counts["Messages"] > 3 || s.count.Total() > 15 {
		t.Errorf("catching up on 200 messages cost %d store calls: %v", s.count.Total(), counts)
	}
	all, _, err := s.svc.History(t.Context(), s.admin, "team", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := bpe.Get("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.svc.Stats(t.Context(), s.admin, "team")
	if err != nil {
		t.Fatal(err)
	}
	if st.ReadTokens["builder"] != int64(enc.Count(string(all))) {
		t.Errorf("builder read %d tokens, want the %d of the history streamed", st.ReadTokens["builder"], enc.Count(string(all)))
	}
}

// TestCachedHistoryPages: a full page over HTTP is served the second time without a store
// read, with the same bytes and headers, and only to callers who may read the room.
func TestCachedHistoryPages(t *testing.T) {
	s := newCountedServer(t)
	const path = "/v1/rooms/team/history?after=50&limit=100"
	cold := do(t, s.ts, "GET", path, s.tokens["lead"], "")
	if cold.status != 200 || cold.header.Get(phttp.NextAfterHeader) != "150" || !strings.Contains(cold.header.Get("Cache-Control"), "immutable") {
		t.Fatalf("cold: %d %v", cold.status, cold.header)
	}
	s.count.Reset()
	hot := do(t, s.ts, "GET", path, s.tokens["builder"], "")
	if c := s.count.Counts(); c["Messages"] != 0 || c["Room"] != 0 {
		t.Errorf("the second read of a full page read the store: %v", c)
	}
	if !bytes.Equal(hot.body, cold.body) || len(hot.body) == 0 {
		t.Fatal("the cached page's bytes differ")
	}
	for _, h := range []string{"ETag", "X-Parley-Last-Seq", phttp.NextAfterHeader, "Cache-Control", "Content-Length", "Content-Type"} {
		if hot.header.Get(h) != cold.header.Get(h) {
			t.Errorf("%s: cached %q, cold %q", h, hot.header.Get(h), cold.header.Get(h))
		}
	}
	if r := do(t, s.ts, "GET", path, s.tokens["lead"], "", "If-None-Match", cold.header.Get("ETag")); r.status != 304 {
		t.Errorf("If-None-Match on a cached page: %d", r.status)
	}
	if r := do(t, s.ts, "GET", path, s.tokens["x"], ""); r.status != 403 {
		t.Errorf("a seat of another room read a cached page: %d %s", r.status, r.body)
	}
	if r := do(t, s.ts, "GET", path, "", ""); r.status != 401 {
		t.Errorf("no token: %d", r.status)
	}
	// Every read was counted for its seat, the cached ones as the cold one (lead's
	// revalidation too, as it always was).
	st, err := s.svc.Stats(t.Context(), s.admin, "team")
	if err != nil {
		t.Fatal(err)
	}
	if st.ReadTokens["builder"] == 0 || st.ReadTokens["lead"] != 2*st.ReadTokens["builder"] {
		t.Errorf("read tokens %v", st.ReadTokens)
	}
	// The last page reached the end of the room: it is read afresh.
	tail := do(t, s.ts, "GET", "/v1/rooms/team/history?after=150", s.tokens["lead"], "")
	s.count.Reset()
	again := do(t, s.ts, "GET", "/v1/rooms/team/history?after=150", s.tokens["lead"], "")
	if !bytes.Equal(tail.body, again.body) || tail.header.Get(phttp.NextAfterHeader) != "" || s.count.Counts()["Messages"] == 0 {
		t.Errorf("the last page: %v, store calls %v", tail.header, s.count.Counts())
	}
	if n, _ := strconv.Atoi(again.header.Get("X-Parley-Last-Seq")); n != 200 {
		t.Errorf("last seq %d", n)
	}
}
