package servicetest

import (
	"slices"
	"strings"
	"testing"

	"github.com/parleyhq/parley"
)

// A message by its parts is the composed text, posted through the whole pipeline.
func testPostDraft(t *testing.T, e Env) {
	ctx := t.Context()
	seats, _ := room(t, e, "r", nil, "a", "b")
	others, _ := room(t, e, "other", nil, "c")
	d := &parley.Draft{Intent: "request", Topic: "limiter", To: []string{"b"}, Lines: []string{"req add a token bucket", "ask burst 10 ok?"}}
	res, err := e.Svc.PostDraft(ctx, seats["a"], "r", d, "k-1")
	if err != nil || res.Seq != 1 || res.Replay {
		t.Fatalf("PostDraft: %+v, %v", res, err)
	}
	if h := history(t, e, seats["b"], "r", 0); !strings.HasSuffix(strings.SplitN(h, "\n", 2)[1], "v1 request limiter to b n=2\nreq add a token bucket\nask burst 10 ok?\n\n") {
		t.Errorf("history of a post by parts:\n%s", h)
	}
	if res, err := e.Svc.PostDraft(ctx, seats["a"], "r", d, "k-1"); err != nil || res.Seq != 1 || !res.Replay {
		t.Errorf("the same parts with the same key: %+v, %v; want a replay of #1", res, err)
	}
	in := must(e.Svc.Inbox(ctx, seats["b"], "r"))(t)
	if len(in.Unanswered) != 1 || in.Unanswered[0].Line != "ask burst 10 ok?" {
		t.Errorf("the ask of a post by parts: %+v", in.Unanswered)
	}

	_, err = e.Svc.PostDraft(ctx, seats["a"], "r", &parley.Draft{Intent: "note", Topic: "x", To: []string{"b"}}, "")
	ds, _ := field(err, "diagnostics").([]parley.Diagnostic)
	if code(t, err) != parley.EINVALID || len(ds) != 1 || ds[0].Code != "draft-lines" || ds[0].Line != 2 {
		t.Errorf("no lines: %v %+v", err, ds)
	}
	_, err = e.Svc.PostDraft(ctx, seats["a"], "r", &parley.Draft{Intent: "note", Topic: "x", To: []string{"zed"}, Lines: []string{"a"}}, "")
	if code(t, err) != parley.EINVALID || !strings.Contains(parley.ErrorMessage(err), "zed") {
		t.Errorf("an addressee who does not sit here: %v", err)
	}
	_, err = e.Svc.PostDraft(ctx, others["c"], "r", d, "")
	if code(t, err) != parley.EFORBIDDEN {
		t.Errorf("another room's seat: %v", err)
	}
	if _, err := e.Svc.PostDraft(ctx, e.Admin, "r", d, ""); code(t, err) != parley.EFORBIDDEN {
		t.Errorf("the admin, who has no seat: %v", err)
	}
	if h := history(t, e, seats["b"], "r", 1); h != "" {
		t.Errorf("a refused post by parts stored something:\n%s", h)
	}
}

// Parts that make no message are a refused post, counted by the rate caps like any other.
func testPostDraftRateLimit(t *testing.T, e Env) {
	seats, _ := room(t, e, "r", &parley.Policy{SeatMessagesPerMinute: 1, SeatBurst: 2}, "a")
	bad := &parley.Draft{Intent: "note", Topic: "x", To: []string{"all"}, Lines: []string{"v1 note x to all n=1"}}
	for i := range 2 {
		if _, err := e.Svc.PostDraft(t.Context(), seats["a"], "r", bad, ""); code(t, err) != parley.EINVALID {
			t.Fatalf("bad parts %d: %v", i+1, err)
		}
	}
	good := &parley.Draft{Intent: "note", Topic: "x", To: []string{"all"}, Lines: []string{"fact"}}
	if _, err := e.Svc.PostDraft(t.Context(), seats["a"], "r", good, ""); code(t, err) != parley.ERATELIMIT {
		t.Errorf("a third post after two refused ones: %v, want ERATELIMIT", err)
	}
}

// Search: ranked results as history names them, the access rules of history, bounds, and the
// count of reads.
func testSearch(t *testing.T, e Env) {
	ctx := t.Context()
	seats, _ := room(t, e, "r", nil, "a", "b")
	others, _ := room(t, e, "other", nil, "c")
	for _, line := range []string{"opt/A redis sliding window", "nothing to see here", "redis cache warmed up"} {
		post(t, e, seats["a"], "r", "v1 note limiter to all n=1\n"+line+"\n")
	}
	post(t, e, others["c"], "other", "v1 note limiter to all n=1\nredis window elsewhere\n")

	res, err := e.Svc.Search(ctx, seats["b"], "r", `Redis "window*`, 0)
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	var seqs []int64
	for _, h := range res.Results {
		seqs = append(seqs, h.Seq)
	}
	if !slices.Equal(seqs, []int64{1, 3}) || res.More || res.Query != `Redis "window*` {
		t.Fatalf("Search = %+v, want #1 (both words) then #3", res)
	}
	h := history(t, e, seats["b"], "r", 0)
	if first := res.Results[0]; first.Seat != "a" || first.Topic != "limiter" || !strings.HasPrefix(h, "#1 a "+first.Time+"\n") ||
		!slices.Equal(first.Lines, []string{"opt/A redis sliding window"}) {
		t.Errorf("the best result %+v; history starts %q", first, h[:min(len(h), 40)])
	}
	if res := must(e.Svc.Search(ctx, seats["b"], "r", "redis", 1))(t); len(res.Results) != 1 || !res.More {
		t.Errorf("limit 1: %+v", res)
	}
	if res := must(e.Svc.Search(ctx, seats["b"], "r", `"*:(`, 0))(t); len(res.Results) != 0 || res.Results == nil {
		t.Errorf("a query of signs only: %+v (want an empty list)", res)
	}
	if res := must(e.Svc.Search(ctx, e.Admin, "r", "warmed", 0))(t); len(res.Results) != 1 || res.Results[0].Seq != 3 {
		t.Errorf("the admin's search: %+v", res)
	}
	for _, tc := range []struct {
		name  string
		c     *parley.Caller
		room  string
		q     string
		limit int
		code  string
	}{
		{"empty", seats["b"], "r", " ", 0, parley.EINVALID},
		{"too long", seats["b"], "r", strings.Repeat("w ", 300), 0, parley.EINVALID},
		{"limit over 100", seats["b"], "r", "redis", 101, parley.EINVALID},
		{"another room's seat", others["c"], "r", "redis", 0, parley.EFORBIDDEN},
		{"no room", e.Admin, "nosuch", "redis", 0, parley.ENOTFOUND},
	} {
		if _, err := e.Svc.Search(ctx, tc.c, tc.room, tc.q, tc.limit); code(t, err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
	st := must(e.Svc.Stats(ctx, seats["b"], "r"))(t)
	if got := st.Counters["b"]["searches"]; got != 2 {
		t.Errorf("b's searches: %d, want 2 (the ones that found something)", got)
	}
	if st.Counters["b"]["read_tokens"] == 0 {
		t.Errorf("b's read tokens: none counted")
	}
}
