package room_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/room"
)

// bigPolicy is a lenient room that takes the largest messages and never rate-limits.
func bigPolicy() *parley.Policy {
	p := parley.DefaultPolicy()
	p.Format = parley.PolicyLenient
	p.MaxMessageBytes = 1 << 20
	p.SeatMessagesPerMinute, p.SeatBurst = 1e7, 1<<20
	p.RoomMessagesPerMinute, p.RoomBurst = 1e7, 1<<20
	p.SeatTokensPerMinute = 1 << 30
	return &p
}

// appendRaw stores a message straight into the store, as the pipeline would have.
func (f *Fixture) appendRaw(rm, seat, body string) *parley.Message {
	f.tb.Helper()
	h := sha256.Sum256([]byte(body))
	m, err := f.Store.Append(f.tb.Context(), &parley.Append{Message: &parley.Message{
		Room: rm, Seat: seat, Time: f.Clock.Now(), Format: parley.FormatText, Body: body, Tokens: 1, Hash: h[:]}})
	if err != nil {
		f.tb.Fatalf("append: %v", err)
	}
	return m.Message
}

// pages reads the history after `after` page by page through HistoryPage, checking each
// page's bounds, and returns the text and the number of pages.
func pages(t *testing.T, f *Fixture, c *parley.Caller, rm string, after int64) (string, int) {
	t.Helper()
	var all strings.Builder
	n := 0
	for {
		p, err := f.Svc.HistoryPage(t.Context(), c, rm, after, 0)
		if err != nil {
			t.Fatalf("HistoryPage after %d: %v", after, err)
		}
		var buf bytes.Buffer
		if err := p.Stream(&buf); err != nil {
			t.Fatalf("stream after %d: %v", after, err)
		}
		if int64(buf.Len()) != p.Size {
			t.Fatalf("page after %d: streamed %d bytes, planned %d", after, buf.Len(), p.Size)
		}
		if sum := sha256.Sum256(buf.Bytes()); !bytes.Equal(sum[:], p.Sum) {
			t.Fatalf("page after %d: the streamed bytes do not hash to the planned sum", after)
		}
		msgs := p.Last - p.After
		if msgs > parley.HistoryPageMessages || (msgs > 1 && p.Size > parley.HistoryPageBytes) {
			t.Fatalf("page after %d: %d messages, %d bytes: over the page bounds", after, msgs, p.Size)
		}
		if buf.Len() > 0 && (!bytes.HasPrefix(buf.Bytes(), []byte(fmt.Sprintf("#%d ", after+1))) || !bytes.HasSuffix(buf.Bytes(), []byte("\n\n"))) {
			t.Fatalf("page after %d does not hold whole messages", after)
		}
		all.Write(buf.Bytes())
		if buf.Len() > 0 {
			n++
		}
		if !p.Full {
			return all.String(), n
		}
		after = p.Last
	}
}

func TestHistoryPagesBoundBytes(t *testing.T) {
	f := MustFixture(t, "")
	f.MustRoom("big", bigPolicy(), "a")
	c := f.Seats["big/a"]
	var whole []byte
	for i := range 100 {
		m := f.appendRaw("big", "a", fmt.Sprintf("message %d ", i)+strings.Repeat("x", 100<<10))
		whole = room.AppendMessage(whole, m)
	}
	// One message over the byte cap still makes a page of its own.
	m := f.appendRaw("big", "a", strings.Repeat("y", parley.HistoryPageBytes+10))
	whole = room.AppendMessage(whole, m)
	f.appendRaw("big", "a", "after the giant")
	whole = room.AppendMessage(whole, &parley.Message{Seq: 102, Seat: "a", Time: f.Clock.Now(), Body: "after the giant"})

	first, last, err := f.Svc.History(t.Context(), c, "big", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) > parley.HistoryPageBytes || last >= 100 || last < 30 {
		t.Fatalf("first unlimited page: %d bytes up to #%d; want at most %d bytes", len(first), last, parley.HistoryPageBytes)
	}
	// An explicit limit is bounded by bytes too.
	if b, last, _ := f.Svc.History(t.Context(), c, "big", 0, 10000); len(b) > parley.HistoryPageBytes || last >= 100 {
		t.Fatalf("limit=10000: %d bytes up to #%d", len(b), last)
	}
	giant, err := f.Svc.HistoryPage(t.Context(), c, "big", 100, 0)
	if err != nil || giant.Last != 101 || !giant.Full || giant.Size <= parley.HistoryPageBytes {
		t.Fatalf("page after 100 = %+v, %v; want the giant message alone, full", giant, err)
	}
	text, n := pages(t, f, c, "big", 0)
	if text != string(whole) {
		t.Fatalf("the pages do not add up to the history (%d bytes, want %d)", len(text), len(whole))
	}
	if n < 3 {
		t.Fatalf("%d pages for %d bytes", n, len(whole))
	}
	// Byte-stable: the text after any seq is a suffix of the whole.
	for _, after := range []int64{1, 37, 99, 101} {
		if tail, _ := pages(t, f, c, "big", after); !strings.HasSuffix(string(whole), tail) || tail == "" {
			t.Fatalf("history after #%d is not a suffix of the whole", after)
		}
	}
}

func TestHistoryPagesBoundCount(t *testing.T) {
	f := MustFixture(t, "")
	f.MustRoom("many", bigPolicy(), "a")
	c := f.Seats["many/a"]
	for i := range parley.HistoryPageMessages + 500 {
		f.appendRaw("many", "a", fmt.Sprintf("fact %d", i))
	}
	p, err := f.Svc.HistoryPage(t.Context(), c, "many", 0, 0)
	if err != nil || p.Last != parley.HistoryPageMessages || !p.Full {
		t.Fatalf("first page = %+v, %v; want %d messages, full", p, err, parley.HistoryPageMessages)
	}
	p, err = f.Svc.HistoryPage(t.Context(), c, "many", parley.HistoryPageMessages, 0)
	if err != nil || p.Last != parley.HistoryPageMessages+500 || p.Full {
		t.Fatalf("second page = %+v, %v; want the last 500, not full", p, err)
	}
	// A page that stops at an explicit limit is full, whether or not more follow.
	if p, _ := f.Svc.HistoryPage(t.Context(), c, "many", 1490, 10); p.Last != 1500 || !p.Full {
		t.Fatalf("limit 10 after 1490 = %+v", p)
	}
	if _, n := pages(t, f, c, "many", 0); n != 2 {
		t.Fatalf("%d pages, want 2", n)
	}
}

func TestAckCapCountsOnlyAcknowledgements(t *testing.T) {
	f := MustFixture(t, "")
	f.MustRoom("r", &parley.Policy{SeatBurst: 1000}, "a", "b") // refusals count against the cap
	f.MustRoom("l", bigPolicy(), "a", "b")
	for _, words := range [][]string{
		{"red", "green", "rolled-back", "b", "all", "a", "42", "yes", "no"},
	} {
		for i, w := range words {
			seat := []string{"r/a", "r/b"}[i%2]
			if _, err := f.Post(seat, fmt.Sprintf("v1 note ci to all n=1\n%s\n", w), ""); err != nil {
				t.Fatalf("one-word fact %q refused: %v", w, err)
			}
			seat = []string{"l/a", "l/b"}[i%2]
			if _, err := f.Post(seat, w+"\n", ""); err != nil {
				t.Fatalf("one-word plain fact %q refused: %v", w, err)
			}
		}
	}
	// Acknowledgements still count: two in a row, and the third is refused.
	f.MustPost("r/a", "v1 note ci to all n=1\nok\n")
	f.MustPost("r/b", "v1 note ci to all n=1\noutcome thanks a\n")
	for _, ack := range []string{"👍", "🎉🎉", "🙏🏽 b", "got it", "+1", "noted", "thanks all"} {
		_, err := f.Post("r/a", "v1 note ci to all n=1\n"+ack+"\n", "")
		if parley.ErrorCode(err) != parley.EINVALID || !strings.Contains(err.Error(), "were acknowledgements") {
			t.Fatalf("third acknowledgement %q: %v", ack, err)
		}
	}
	f.MustPost("l/a", "thanks\n")
	f.MustPost("l/b", "ok b\n")
	if _, err := f.Post("l/a", "cheers\n", ""); parley.ErrorCode(err) != parley.EINVALID {
		t.Fatalf("third plain acknowledgement: %v", err)
	}
}

func TestAskDueAtZeroTimeLapses(t *testing.T) {
	f := MustFixture(t, "")
	f.MustRoom("r", nil, "a", "b")
	res := f.MustPost("r/a", "v1 request plan to b n=2\nask pick one by 00010101T0000Z\ndefault A\n")
	if len(res.Warnings) == 0 || res.Warnings[0].Code != "ask-past" {
		t.Fatalf("warnings = %+v, want ask-past", res.Warnings)
	}
	n, err := f.Svc.LapseDue(t.Context())
	if err != nil || n != 1 {
		t.Fatalf("LapseDue = %d, %v; want the ask due at the zero time lapsed", n, err)
	}
	h := f.History("r/a", res.Seq)
	if !strings.Contains(h, "due 00010101T0000Z") || !strings.Contains(h, "default applied: A") {
		t.Fatalf("lapse message:\n%s", h)
	}
	// An ask without a time never lapses.
	f.MustPost("r/a", "v1 request plan to b n=1\nask pick another\n")
	if n, err := f.Svc.LapseDue(t.Context()); err != nil || n != 0 {
		t.Fatalf("LapseDue with an ask without time = %d, %v", n, err)
	}
}

func TestEvidenceChecksCapped(t *testing.T) {
	dir, sha := MustRepo(t)
	f := MustFixture(t, dir)
	p := parley.DefaultPolicy()
	p.MaxEvidenceChecks = 3
	f.MustRoom("r", &p, "a")
	var b strings.Builder
	fmt.Fprintf(&b, "v1 report ci to all n=11\ndone#1 built it\n")
	for range 10 {
		fmt.Fprintf(&b, "ev#1 commit %s on feat/rate-limit\n", sha[:7])
	}
	res := f.MustPost("r/a", b.String())
	checked, capped := 0, 0
	for _, n := range res.Notes {
		switch {
		case strings.Contains(n, "verified: commit "+sha[:7]+" on feat/rate-limit"):
			checked++
		case strings.Contains(n, "unverified: too many evidence lines"):
			capped++
		}
	}
	if checked != 3 || capped != 7 {
		t.Fatalf("%d checked and %d capped, want 3 and 7:\n%s", checked, capped, strings.Join(res.Notes, "\n"))
	}
	res = f.MustPost("r/a", "v1 report ci to all n=2\ndone#1 fixed it\nev#1 commit "+sha[:4]+"\n")
	if !strings.Contains(strings.Join(res.Notes, "\n"), "unverified: commit "+sha[:4]+" is too short to check") {
		t.Fatalf("4-digit sha: %v", res.Notes)
	}
	for _, bad := range []string{`{"max_evidence_checks":-1}`, `{"max_evidence_checks":201}`} {
		if _, err := f.Svc.UpdatePolicy(t.Context(), f.Admin, "r", []byte(bad)); parley.ErrorCode(err) != parley.EINVALID ||
			!strings.Contains(err.Error(), "max_evidence_checks") {
			t.Errorf("policy %s: %v", bad, err)
		}
	}
}

// emptyAACP is a packet of about n bytes whose fields are all empty.
func emptyAACP(n int) string {
	head := "REQ|DEV|return:a|p:1|aacp:1.1|to:all"
	return head + strings.Repeat("|", n-len(head))
}

func TestRefusalListsTwentyDiagnostics(t *testing.T) {
	f := MustFixture(t, "")
	f.MustRoom("r", nil, "a")
	body := emptyAACP(65000)
	_, err := f.Post("r/a", body, "")
	pe, ok := err.(*parley.Error)
	if !ok || pe.Code != parley.EINVALID {
		t.Fatalf("post: %v", err)
	}
	ds, _ := pe.Fields["diagnostics"].([]parley.Diagnostic)
	more, _ := pe.Fields["more_diagnostics"].(int)
	if len(ds) != room.MaxDiagnostics || more < 1000 || !strings.Contains(pe.Message, "first 20 of") {
		t.Fatalf("%d diagnostics, %d more, message %q", len(ds), more, pe.Message)
	}
	if b, _ := json.Marshal(pe.Fields); len(b) > 16<<10 {
		t.Fatalf("refusal fields are %d bytes", len(b))
	}
	lint, err := f.Svc.Lint(t.Context(), f.Seats["r/a"], "r", []byte(body))
	if err != nil || len(lint) != room.MaxDiagnostics+1 || lint[room.MaxDiagnostics].More != more {
		t.Fatalf("lint: %d diagnostics, %v", len(lint), err)
	}
}

func TestStateJSONBounded(t *testing.T) {
	f := MustFixture(t, "")
	f.MustRoom("r", bigPolicy(), "a", "b")
	for i := range 200 {
		f.MustPost([]string{"r/a", "r/b"}[i%2], fmt.Sprintf("v1 decide plan to all n=2\noutcome option %d %s\ncost %d %s\n", i, strings.Repeat("long words ", 60), i, strings.Repeat("z", 2000)))
	}
	rec, err := f.Svc.State(t.Context(), f.Seats["r/a"], "r", "plan")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(rec)
	if len(b) > room.StateJSONCap || rec.Dropped == 0 {
		t.Fatalf("state JSON is %d bytes (cap %d), dropped %d", len(b), room.StateJSONCap, rec.Dropped)
	}
	newest := false
	for _, d := range rec.Decisions {
		newest = newest || strings.HasPrefix(d.Text, "outcome option 199 ")
		if d.Seq < 150 {
			t.Fatalf("decision of #%d kept while newer ones were dropped", d.Seq)
		}
	}
	if !newest {
		t.Fatalf("the newest decision was not kept")
	}
	for _, c := range rec.Costs {
		if len(c.Text) > 400 {
			t.Fatalf("a cost line of %d bytes was not clipped", len(c.Text))
		}
	}
	text := room.RenderState(rec)
	if len(text) > room.StateCap || !strings.Contains(text, "dropped ") {
		t.Fatalf("text: %d bytes\n%s", len(text), text)
	}
}
