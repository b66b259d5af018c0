package web_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/bpe"
	"github.com/parleyhq/parley/web"
)

// store appends n convention messages to limiter straight into the store, as the pipeline
// would have stored them: message i by one of the three seats, on topic "limiter" or, every
// tenth, "search", with a token count of 1000+i that no tokenizer would give.
func (f *fixture) store(t *testing.T, n int) {
	t.Helper()
	seats := []string{"lead", "builder", "yu"}
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for i := range n {
		topic := "limiter"
		if i%10 == 9 {
			topic = "search"
		}
		body := fmt.Sprintf("v1 report %s to all n=2\ndone#1 step %d of the work\ntodo step %d\n", topic, i, i+1)
		h := sha256.Sum256([]byte(body))
		var notes []string
		if i%5 == 0 {
			notes = []string{"! done#1 unproven: no ev line under it"}
		}
		if _, err := f.raw.Append(t.Context(), &parley.Append{Message: &parley.Message{
			Room: "limiter", Seat: seats[i%3], Time: at.Add(time.Duration(i) * time.Second), Format: parley.FormatConvention,
			Topic: topic, Intent: "report", Body: body, Tokens: 1000 + i, Hash: h[:], Notes: notes}}); err != nil {
			t.Fatal(err)
		}
	}
}

// historyTokens counts the history text of messages after+1..after+n as the server does.
func (f *fixture) historyTokens(t *testing.T, after int64, n int) int64 {
	t.Helper()
	text, _, err := f.svc.History(t.Context(), f.admin, "limiter", after, n)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := bpe.Get("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	return int64(enc.Count(string(text)))
}

func (f *fixture) counters(t *testing.T) map[string]map[string]int64 {
	t.Helper()
	st, err := f.svc.Stats(t.Context(), f.admin, "limiter")
	if err != nil {
		t.Fatal(err)
	}
	return st.Counters
}

// TestTranscriptReads: the room page of 200 messages is a handful of store calls (one read of
// the messages, no Stats), shows the token counts the store holds, and counts as the
// signed-in seat's read; the admin's views count for no one.
func TestTranscriptReads(t *testing.T) {
	f := newFixture(t, web.Options{})
	f.store(t, 250)
	b := f.browser(t)
	b.signIn(f.tokens["lead"])
	f.count.Reset()
	resp, body := b.get("/rooms/limiter")
	counts, total := f.count.Counts(), f.count.Total()
	t.Logf("room page of 200 messages: %d store calls %v", total, counts)
	if resp.StatusCode != 200 || !strings.Contains(body, `id="m51"`) || !strings.Contains(body, `id="m250"`) || strings.Contains(body, `id="m50"`) {
		t.Fatalf("room page: %d\n%s", resp.StatusCode, body)
	}
	if counts["Messages"] != 1 || counts["Stats"] != 0 || total > 8 {
		t.Errorf("a page of 200 messages cost %d store calls: %v", total, counts)
	}
	// The counts the store holds, not a tokenizer's.
	if !strings.Contains(body, ">1249 tokens<") || !strings.Contains(body, ">1050 tokens<") {
		t.Error("the page does not show the stored token counts")
	}
	if !strings.Contains(body, "done#1 unproven: no ev line under it") || !strings.Contains(body, `href="/rooms/limiter?after=0">Earlier messages`) {
		t.Errorf("notes or the link to earlier messages missing:\n%s", body)
	}
	got := f.counters(t)["lead"]
	if want := f.historyTokens(t, 50, 200); got["read_tokens"] != want || got["reads"] != 1 {
		t.Errorf("lead's counters after one page view: %v, want read_tokens %d, 1 read", got, want)
	}

	// An earlier page, then the admin's view: the first counted, the second not.
	if _, body := b.get("/rooms/limiter?after=10"); !strings.Contains(body, `id="m11"`) || !strings.Contains(body, `id="m210"`) || strings.Contains(body, `id="m211"`) {
		t.Errorf("earlier page:\n%s", body)
	}
	got = f.counters(t)["lead"]
	if want := f.historyTokens(t, 50, 200) + f.historyTokens(t, 10, 200); got["read_tokens"] != want || got["reads"] != 2 {
		t.Errorf("lead's counters after two page views: %v, want read_tokens %d", got, want)
	}
	before := f.counters(t)
	a := f.browser(t)
	a.signIn(adminToken)
	if resp, body := a.get("/rooms/limiter"); resp.StatusCode != 200 || !strings.Contains(body, `id="m250"`) {
		t.Fatalf("admin's view: %d", resp.StatusCode)
	}
	if after := f.counters(t); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the admin's view was counted: %v, was %v", after, before)
	}
}

// An ?after= link near the end shows the latest page, reading (and counting) each message once.
func TestTranscriptLateEarlierLink(t *testing.T) {
	f := newFixture(t, web.Options{TranscriptLimit: 20})
	f.store(t, 30)
	b := f.browser(t)
	b.signIn(f.tokens["yu"])
	_, body := b.get("/rooms/limiter?after=25")
	if !strings.Contains(body, `id="m11"`) || !strings.Contains(body, `id="m30"`) || strings.Contains(body, `id="m10"`) || !strings.Contains(body, "data-events=") {
		t.Fatalf("page:\n%s", body)
	}
	if got, want := f.counters(t)["yu"]["read_tokens"], f.historyTokens(t, 10, 20); got != want {
		t.Errorf("read_tokens %d, want %d: each message shown counted once", got, want)
	}
}

// TestEventsCatchUpReads: catching up on 200 messages over the live stream is a few store
// reads, not one per message, and counts as the seat's read.
func TestEventsCatchUpReads(t *testing.T) {
	f := newFixture(t, web.Options{Heartbeat: time.Hour})
	f.store(t, 200)
	b := f.browser(t)
	b.signIn(f.tokens["builder"])
	f.count.Reset()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.url+"/ui/rooms/limiter/events?after=0", nil)
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	var ids []string
	var data strings.Builder
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended after %d events: %v", len(ids), err)
		}
		if line == "\n" && len(ids) == 200 {
			break
		}
		switch {
		case strings.HasPrefix(line, "id: "):
			ids = append(ids, strings.TrimSpace(line[4:]))
		case strings.HasPrefix(line, "data: "):
			data.WriteString(line)
		}
	}
	for i, id := range ids {
		if id != strconv.Itoa(i+1) {
			t.Fatalf("event %d has id %s", i+1, id)
		}
	}
	if !strings.Contains(data.String(), `id="m200"`) || !strings.Contains(data.String(), "1199 tokens") {
		t.Error("the events do not carry the rendered messages")
	}
	counts := f.count.Counts()
	t.Logf("catching up on 200 events: %d store calls %v", f.count.Total(), counts)
	if counts["Messages"] > 3 || f.count.Total() > 15 {
		t.Errorf("catching up on 200 messages cost %d store calls: %v", f.count.Total(), counts)
	}
	if got, want := f.counters(t)["builder"]["read_tokens"], f.historyTokens(t, 0, 200); got != want {
		t.Errorf("builder's read_tokens %d, want %d", got, want)
	}
}

// TestStateTopics: the state page lists the topics of the room's convention messages, the
// most recently named first, from the store's topics.
func TestStateTopics(t *testing.T) {
	f := newFixture(t, web.Options{})
	f.store(t, 9) // limiter
	f.post(t, "lead", "v1 note search to all n=1\noutcome indexed\n")
	f.post(t, "lead", "v1 note billing to all n=1\noutcome invoiced\n")
	f.post(t, "lead", "v1 note search to all n=1\noutcome reindexed\n")
	b := f.browser(t)
	b.signIn(f.tokens["yu"])
	_, body := b.get("/rooms/limiter/state")
	i, j, k := strings.Index(body, "state?topic=search"), strings.Index(body, "state?topic=billing"), strings.Index(body, "state?topic=limiter")
	if i < 0 || j < 0 || k < 0 || i > j || j > k {
		t.Errorf("topics not most recent first (search %d, billing %d, limiter %d):\n%s", i, j, k, body)
	}
}
