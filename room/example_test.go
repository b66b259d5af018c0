package room_test

import (
	"fmt"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/room"
)

func ExampleRenderInbox() {
	in := &parley.Inbox{
		Seat: "yu", Room: "demo",
		Unanswered: []parley.InboxAsk{{
			Seq: 3, From: "builder", To: "yu",
			Line:    "ask how to store rate-limit counters, 20260918T0900Z",
			Due:     new(time.Date(2026, 9, 18, 9, 0, 0, 0, time.UTC)),
			Default: "silence past the ask time→A with the fail-open",
		}},
	}
	fmt.Print(room.RenderInbox(in))
	// Output:
	// you are yu in room demo
	// v1 inbox demo to yu n=3
	// ask #3 from builder: how to store rate-limit counters, 20260918T0900Z
	// default #3 silence past the ask time→A with the fail-open
	// req answer each ask with re <seq> in your header
}

func ExampleRenderState() {
	rec := &parley.StateRecord{
		Room: "demo", Topic: "limiter", LastSeq: 4,
		OpenAsks: []*parley.Ask{{Seq: 2, From: "builder", To: "lead",
			Text: "decide 20260918T0900Z: mock Redis in tests, or skip the route test",
			Due:  new(time.Date(2026, 9, 18, 9, 0, 0, 0, time.UTC))}},
		Decisions: []parley.StateItem{{Seq: 4, Seat: "yu", Text: "A, with the fail-open"}},
		Done: []parley.StateItem{{Seq: 2, Seat: "builder", Text: "limiter lib/rate-limit.ts sliding window",
			Verdict: "verified: commit 3f9a2c1 on feat/rate-limit"}},
		Claims: []parley.StateItem{{Seq: 2, Seat: "builder", Text: "unit test passing, 12 cases"}},
		Todos:  []parley.StateItem{{Seq: 2, Seat: "builder", Text: "route test for the 429 path"}},
		Costs:  []parley.StateItem{{Seq: 2, Seat: "builder", Text: "61000 tokens"}},
		Tokens: map[string]int{"builder": 274, "yu": 20},
	}
	fmt.Print(room.RenderState(rec))
	// Output:
	// v1 state limiter to all n=8
	// ask #2 builder to lead: decide 20260918T0900Z: mock Redis in tests, or skip the route test
	// decided #4 yu: A, with the fail-open
	// done#1 #2 builder: limiter lib/rate-limit.ts sliding window
	// ev#1 verified: commit 3f9a2c1 on feat/rate-limit
	// claim #2 builder: unit test passing, 12 cases
	// todo builder: route test for the 429 path
	// cost builder: 61000 tokens
	// tokens builder=274 yu=20
}
