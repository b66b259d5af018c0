package room_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/bpe"
	"github.com/parleyhq/parley/internal/sqlitetest"
	"github.com/parleyhq/parley/internal/storecount"
	"github.com/parleyhq/parley/internal/textline"
	"github.com/parleyhq/parley/room"
	"github.com/parleyhq/parley/sqlite"
)

// readsFixture is a Service over a real SQLite store wrapped in a call counter, with two
// rooms: r (seats a, b, c) and other (seat x).
type readsFixture struct {
	svc   *room.Service
	raw   *sqlite.Store
	count *storecount.Store
	admin *parley.Caller
	seat  map[string]*parley.Caller
	at    time.Time
}

func newReadFixture(t *testing.T, cacheBytes int64) *readsFixture {
	t.Helper()
	raw := sqlitetest.Open(t)
	cs := storecount.New(raw)
	svc, err := room.New(cs, room.Config{AdminToken: adminToken, Logger: slog.New(slog.DiscardHandler), HistoryCacheBytes: cacheBytes})
	if err != nil {
		t.Fatal(err)
	}
	admin, err := svc.Authenticate(t.Context(), adminToken)
	if err != nil {
		t.Fatal(err)
	}
	f := &readsFixture{svc: svc, raw: raw, count: cs, admin: admin, seat: map[string]*parley.Caller{},
		at: time.Date(2026, 9, 17, 9, 0, 0, 0, time.UTC)}
	for rm, seats := range map[string][]string{"r": {"a", "b", "c"}, "other": {"x"}} {
		if _, err := svc.CreateRoom(t.Context(), admin, rm, bigPolicy()); err != nil {
			t.Fatal(err)
		}
		for _, s := range seats {
			_, tok, err := svc.AddSeat(t.Context(), admin, rm, s, parley.RoleAgent)
			if err != nil {
				t.Fatal(err)
			}
			if f.seat[s], err = svc.Authenticate(t.Context(), tok); err != nil {
				t.Fatal(err)
			}
		}
	}
	return f
}

// add stores a message in room r straight into the store, as the pipeline would have.
func (f *readsFixture) add(t *testing.T, seat, body string, notes ...string) *parley.Message {
	t.Helper()
	h := sha256.Sum256([]byte(body))
	f.at = f.at.Add(time.Second)
	m, err := f.raw.Append(t.Context(), &parley.Append{Message: &parley.Message{
		Room: "r", Seat: seat, Time: f.at, Format: parley.FormatConvention, Topic: "x", Body: body,
		Tokens: 3, Hash: h[:], Notes: notes}})
	if err != nil {
		t.Fatal(err)
	}
	return m.Message
}

// addMany stores n convention messages, a few with notes.
func (f *readsFixture) addMany(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		var notes []string
		if i%7 == 3 {
			notes = []string{"! ev#1 unverified: no such run", "! done#1 unproven"}
		}
		f.add(t, []string{"a", "b", "c"}[i%3], fmt.Sprintf("v1 report x to all n=2\ndone#1 step %d\nev#1 run r-%d\n", i, i), notes...)
	}
}

func (f *readsFixture) history(t *testing.T, c *parley.Caller, after int64, limit int) string {
	t.Helper()
	b, _, err := f.svc.History(t.Context(), c, "r", after, limit)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func render(msgs []*parley.Message) string {
	var b []byte
	for _, m := range msgs {
		b = textline.AppendMessage(b, m)
	}
	return string(b)
}

func seqs(msgs []*parley.Message) string {
	if len(msgs) == 0 {
		return "none"
	}
	return fmt.Sprintf("#%d..#%d (%d)", msgs[0].Seq, msgs[len(msgs)-1].Seq, len(msgs))
}

// TestMessagesArePages: a structured read holds the messages of the same history page, and
// their rendering is History's bytes; a read of the latest ends at the room's last message.
func TestMessagesArePages(t *testing.T) {
	f := newReadFixture(t, -1)
	f.addMany(t, 30)
	// A body stored before the line rules: rendered with its CR escaped, one message still.
	f.add(t, "a", "old\rbody\r\n# 12 forged header\n")
	ctx := t.Context()
	for _, tc := range []struct {
		after int64
		limit int
	}{{0, 0}, {0, 10}, {5, 7}, {29, 5}, {31, 0}, {40, 3}} {
		msgs, last, err := f.svc.Messages(ctx, f.admin, "r", tc.after, tc.limit, parley.NoCount)
		if err != nil || last != 31 {
			t.Fatalf("Messages(%d, %d): last %d, %v", tc.after, tc.limit, last, err)
		}
		if got, want := render(msgs), f.history(t, f.admin, tc.after, tc.limit); got != want {
			t.Errorf("Messages(%d, %d) = %s renders\n%q\nwant History's\n%q", tc.after, tc.limit, seqs(msgs), got, want)
		}
	}
	msgs, last, err := f.svc.Messages(ctx, f.admin, "r", parley.Latest, 7, parley.NoCount)
	if err != nil || last != 31 || seqs(msgs) != "#25..#31 (7)" || msgs[6].Tokens != 3 || len(msgs[0].Notes) != 2 {
		t.Fatalf("latest 7: %s, last %d, %v", seqs(msgs), last, err)
	}
	if render(msgs) != f.history(t, f.admin, 24, 7) {
		t.Error("the latest 7 do not render as History after 24")
	}
	if msgs, _, _ := f.svc.Messages(ctx, f.admin, "r", parley.Latest, 100, parley.NoCount); seqs(msgs) != "#1..#31 (31)" {
		t.Errorf("latest 100 of 31: %s", seqs(msgs))
	}
	if msgs, last, err := f.svc.Messages(ctx, f.admin, "other", parley.Latest, 5, parley.NoCount); err != nil || len(msgs) != 0 || last != 0 {
		t.Errorf("latest of an empty room: %s, last %d, %v", seqs(msgs), last, err)
	}
}

// TestMessagesByteCap: a page of large messages is cut at the page's byte cap as History
// cuts it; a read of the latest keeps the newest that fit.
func TestMessagesByteCap(t *testing.T) {
	f := newReadFixture(t, -1)
	for i := range 60 {
		f.add(t, "a", fmt.Sprintf("message %d %s\n", i, strings.Repeat("x", 100<<10)))
	}
	msgs, last, err := f.svc.Messages(t.Context(), f.admin, "r", 0, 0, parley.NoCount)
	if err != nil || last != 60 {
		t.Fatal(last, err)
	}
	if got, want := render(msgs), f.history(t, f.admin, 0, 0); got != want || len(msgs) >= 60 || len(msgs) < 30 {
		t.Fatalf("first page: %s, %d bytes; History's is %d bytes", seqs(msgs), len(got), len(want))
	}
	latest, _, err := f.svc.Messages(t.Context(), f.admin, "r", parley.Latest, 0, parley.NoCount)
	if err != nil || len(latest) != len(msgs) || latest[len(latest)-1].Seq != 60 || len(render(latest)) > parley.HistoryPageBytes {
		t.Fatalf("latest: %s, %v", seqs(latest), err)
	}
}

func TestMessagesAccess(t *testing.T) {
	f := newReadFixture(t, -1)
	f.addMany(t, 3)
	ctx := t.Context()
	if _, _, err := f.svc.Messages(ctx, f.seat["x"], "r", 0, 0, parley.CountRead); parley.ErrorCode(err) != parley.EFORBIDDEN {
		t.Errorf("a seat of another room: %v", err)
	}
	if _, _, err := f.svc.Messages(ctx, f.admin, "nope", 0, 0, parley.NoCount); parley.ErrorCode(err) != parley.ENOTFOUND {
		t.Errorf("no such room: %v", err)
	}
	if _, _, err := f.svc.Messages(ctx, f.admin, "nope", parley.Latest, 10, parley.NoCount); parley.ErrorCode(err) != parley.ENOTFOUND {
		t.Errorf("latest of no such room: %v", err)
	}
	if _, _, err := f.svc.Messages(ctx, nil, "r", 0, 0, parley.NoCount); parley.ErrorCode(err) != parley.EUNAUTHORIZED {
		t.Errorf("no caller: %v", err)
	}
}

// TestMessagesCounting: a counted structured read counts for the seat exactly what History
// counts for the same page, the prompt-cache projection included; NoCount and the admin's
// reads count nothing.
func TestMessagesCounting(t *testing.T) {
	f := newReadFixture(t, -1)
	f.addMany(t, 20)
	ctx := t.Context()
	counters := func() map[string]map[string]int64 {
		st, err := f.svc.Stats(ctx, f.admin, "r")
		if err != nil {
			t.Fatal(err)
		}
		return st.Counters
	}
	read := func(who string, after int64, limit int) {
		t.Helper()
		if _, _, err := f.svc.Messages(ctx, f.seat[who], "r", after, limit, parley.CountRead); err != nil {
			t.Fatal(err)
		}
	}
	// b reads with Messages, c the same pages with History.
	read("b", 0, 0)
	f.history(t, f.seat["c"], 0, 0)
	f.add(t, "a", "v1 note x to all n=1\noutcome one more\n")
	read("b", 0, 0) // the first 20 again: a provider cache would serve them
	f.history(t, f.seat["c"], 0, 0)
	read("b", 15, 3)
	f.history(t, f.seat["c"], 15, 3)
	got := counters()
	enc, err := bpe.Get("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	want := int64(enc.Count(f.history(t, f.admin, 0, 0))*2 - enc.Count(f.history(t, f.admin, 20, 0)) + enc.Count(f.history(t, f.admin, 15, 3)))
	if got["b"]["read_tokens"] != want || got["b"]["reads"] != 3 || got["b"]["cached_read_tokens"] == 0 {
		t.Errorf("b's counters %v, want read_tokens %d and 3 reads, some cached", got["b"], want)
	}
	for _, k := range []string{"read_tokens", "cached_read_tokens", "reads"} {
		if got["b"][k] != got["c"][k] {
			t.Errorf("%s: %d by Messages, %d by History", k, got["b"][k], got["c"][k])
		}
	}
	// Not counted: NoCount, the admin, a read that returns nothing.
	if _, _, err := f.svc.Messages(ctx, f.seat["a"], "r", 0, 0, parley.NoCount); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.svc.Messages(ctx, f.admin, "r", 0, 0, parley.CountRead); err != nil {
		t.Fatal(err)
	}
	read("a", 21, 0)
	if got := counters(); len(got["a"]) != 0 || len(got[""]) != 0 {
		t.Errorf("uncounted reads counted: %v", got)
	}
}

// TestMessagesHeld: under a held context, nothing is returned once the token was revoked,
// even by another server whose notice has not arrived.
func TestMessagesHeld(t *testing.T) {
	f := newReadFixture(t, -1)
	f.addMany(t, 2)
	ctx, cancel, err := f.svc.Hold(t.Context(), f.seat["b"])
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	if msgs, _, err := f.svc.Messages(ctx, f.seat["b"], "r", 0, 0, parley.CountRead); err != nil || len(msgs) != 2 {
		t.Fatalf("while the token is good: %s, %v", seqs(msgs), err)
	}
	if err := f.raw.RevokeSeat(t.Context(), "r", "b", time.Now()); err != nil {
		t.Fatal(err)
	}
	f.addMany(t, 1)
	msgs, _, err := f.svc.Messages(ctx, f.seat["b"], "r", 2, 0, parley.CountRead)
	wantUnauthorized(t, "after the revocation", err, "the token of seat b was revoked")
	if len(msgs) != 0 {
		t.Fatalf("returned %s after the revocation", seqs(msgs))
	}
}

// TestMessagesStoreReads: a structured read of 200 messages is a handful of store calls.
func TestMessagesStoreReads(t *testing.T) {
	f := newReadFixture(t, -1)
	f.addMany(t, 250)
	ctx, cancel, err := f.svc.Hold(t.Context(), f.seat["b"])
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	for _, after := range []int64{parley.Latest, 0} {
		f.count.Reset()
		msgs, _, err := f.svc.Messages(ctx, f.seat["b"], "r", after, 200, parley.CountRead)
		if err != nil || len(msgs) != 200 {
			t.Fatalf("after %d: %s, %v", after, seqs(msgs), err)
		}
		if c := f.count.Counts(); c["Messages"] != 1 || f.count.Total() > 4 {
			t.Errorf("200 messages after %d cost %d store calls: %v", after, f.count.Total(), c)
		}
	}
}

// fullPage reads a page and its bytes.
func fullPage(t *testing.T, f *readsFixture, c *parley.Caller, after int64, limit int) (*parley.HistoryPage, []byte) {
	t.Helper()
	p, err := f.svc.HistoryPage(t.Context(), c, "r", after, limit)
	if err != nil {
		t.Fatalf("page after %d: %v", after, err)
	}
	var buf bytes.Buffer
	if err := p.Stream(&buf); err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(buf.Bytes()); int64(buf.Len()) != p.Size || !bytes.Equal(sum[:], p.Sum) {
		t.Fatalf("page after %d: %d bytes streamed for %d planned, or another hash", after, buf.Len(), p.Size)
	}
	return p, buf.Bytes()
}

// TestPageCache: a full page, once streamed, is served from memory, byte for byte the page
// read from the store, to every caller who may read the room and to no one else, and counted
// as the same read; a page that reached the end of the room is never cached.
func TestPageCache(t *testing.T) {
	f := newReadFixture(t, 0)
	f.addMany(t, 25)
	ctx := t.Context()

	cold, coldText := fullPage(t, f, f.seat["b"], 0, 10)
	if !cold.Full || cold.Last != 10 {
		t.Fatalf("cold page %+v", cold)
	}
	f.count.Reset()
	hot, hotText := fullPage(t, f, f.seat["c"], 0, 10)
	if f.count.Total() != 0 {
		t.Errorf("a cached page cost store calls: %v", f.count.Counts())
	}
	if !bytes.Equal(hotText, coldText) || !bytes.Equal(hot.Sum, cold.Sum) || hot.Last != cold.Last || !hot.Full || hot.After != 0 {
		t.Fatalf("cached page differs: %+v vs %+v", hot, cold)
	}
	if got, _, err := f.svc.History(ctx, f.admin, "r", 0, 10); err != nil || !bytes.Equal(got, coldText) {
		t.Fatalf("History of the cached page: %v", err)
	}
	// The same page as the room's history from the store, cache off.
	nc := newReadFixture(t, -1)
	nc.addMany(t, 25)
	if _, text := fullPage(t, nc, nc.admin, 0, 10); !bytes.Equal(text, coldText) {
		t.Error("a cached page is not the page an uncached server serves")
	}

	// Access rules hold on cached pages.
	if _, err := f.svc.HistoryPage(ctx, f.seat["x"], "r", 0, 10); parley.ErrorCode(err) != parley.EFORBIDDEN {
		t.Errorf("a seat of another room got a cached page: %v", err)
	}
	if _, err := f.svc.HistoryPage(ctx, nil, "r", 0, 10); parley.ErrorCode(err) != parley.EUNAUTHORIZED {
		t.Errorf("no caller got a cached page: %v", err)
	}
	hctx, cancel, err := f.svc.Hold(ctx, f.seat["a"])
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	if err := f.raw.RevokeSeat(ctx, "r", "a", time.Now()); err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.HistoryPage(hctx, f.seat["a"], "r", 0, 10)
	wantUnauthorized(t, "a cached page after the revocation", err, "the token of seat a was revoked")

	// Counted as the same read: c's cached read counts what b's cold one did, and b's second
	// read of the same page is a prefix a provider cache would serve.
	st, err := f.svc.Stats(ctx, f.admin, "r")
	if err != nil {
		t.Fatal(err)
	}
	if b, c := st.Counters["b"], st.Counters["c"]; b["read_tokens"] == 0 || b["read_tokens"] != c["read_tokens"] || c["reads"] != 1 {
		t.Errorf("cold read counted %v, cached read %v", b, c)
	}
	fullPage(t, f, f.seat["b"], 0, 10)
	st, _ = f.svc.Stats(ctx, f.admin, "r")
	if b := st.Counters["b"]; b["cached_read_tokens"] != b["read_tokens"]/2 || b["reads"] != 2 {
		t.Errorf("b read the same page twice: %v", b)
	}

	// The last page reaches the end of the room: never cached, so it grows.
	tail, _ := fullPage(t, f, f.seat["b"], 20, 10)
	if tail.Full || tail.Last != 25 {
		t.Fatalf("tail page %+v", tail)
	}
	f.addMany(t, 10)
	f.count.Reset()
	if tail, _ := fullPage(t, f, f.seat["b"], 20, 10); !tail.Full || tail.Last != 30 || f.count.Counts()["Messages"] == 0 {
		t.Fatalf("tail page after appends %+v, store calls %v", tail, f.count.Counts())
	}

	// Byte-stable across the cap too: pages of large messages, cold and cached.
	big := newReadFixture(t, 0)
	for i := range 70 {
		big.add(t, "a", fmt.Sprintf("message %d %s\n", i, strings.Repeat("y", 100<<10)))
	}
	var coldAll, hotAll []byte
	for pass, out := range []*[]byte{&coldAll, &hotAll} {
		big.count.Reset()
		for after := int64(0); ; {
			p, text := fullPage(t, big, big.admin, after, 0)
			*out = append(*out, text...)
			if !p.Full {
				break
			}
			after = p.Last
		}
		// Only the last page, which reached the end of the room, is read from the store again.
		if c := big.count.Counts(); pass == 1 && c["Room"] != 1 {
			t.Errorf("the second pass read more than the last page from the store: %v", c)
		}
	}
	all, err := big.raw.Messages(ctx, "r", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(coldAll, hotAll) || string(coldAll) != render(all) {
		t.Error("pages of large messages differ between the store and the cache")
	}
}

// TestPageCacheOff: with no budget, every read goes to the store.
func TestPageCacheOff(t *testing.T) {
	f := newReadFixture(t, -1)
	f.addMany(t, 12)
	fullPage(t, f, f.admin, 0, 10)
	f.count.Reset()
	fullPage(t, f, f.admin, 0, 10)
	if f.count.Counts()["Messages"] == 0 {
		t.Error("a page was served from a cache that is off")
	}
	if used, n, _ := f.svc.PageCacheSize(); used != 0 || n != 0 {
		t.Errorf("the cache holds %d bytes in %d pages", used, n)
	}
}

// TestPageCacheBudget: however many full pages are read, the cache stays within its budget,
// and keeps the pages read most recently.
func TestPageCacheBudget(t *testing.T) {
	const budget = 8 << 10
	f := newReadFixture(t, budget)
	f.addMany(t, 400)
	// Pages of 10 messages, about 800 bytes each: far more than the budget in all.
	var total int
	for after := int64(0); after < 390; after += 10 {
		_, text := fullPage(t, f, f.admin, after, 10)
		total += len(text)
		used, n, b := f.svc.PageCacheSize()
		if b != budget || used > budget || n == 0 {
			t.Fatalf("after the page at %d: %d bytes in %d pages, budget %d", after, used, n, b)
		}
	}
	if total < 2*budget {
		t.Fatalf("the pages read hold only %d bytes; the test needs more than the budget", total)
	}
	// The latest page is cached; the first was evicted.
	f.count.Reset()
	fullPage(t, f, f.admin, 380, 10)
	if f.count.Total() != 0 {
		t.Errorf("the most recent page was not cached: %v", f.count.Counts())
	}
	fullPage(t, f, f.admin, 0, 10)
	if f.count.Counts()["Messages"] == 0 {
		t.Error("the oldest page is still cached past the budget")
	}
	// A page over a quarter of the budget is not kept.
	_, text := fullPage(t, f, f.admin, 0, 300)
	if len(text) < budget/4 {
		t.Fatalf("page of %d bytes", len(text))
	}
	f.count.Reset()
	fullPage(t, f, f.admin, 0, 300)
	if f.count.Counts()["Messages"] == 0 {
		t.Error("a page over a quarter of the budget was cached")
	}
}
