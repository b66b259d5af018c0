package room_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/room"
)

// TestStateByTopicSameRecord checks that State, which reads only the topic's messages and asks,
// gives the record, text and JSON that the whole room's messages and asks give, on a room
// where topics interleave: asks answered from another topic, a lapse's default, reports that
// replace a seat's todos, and one topic big enough that its record drops items.
func TestStateByTopicSameRecord(t *testing.T) {
	repo, sha := MustRepo(t)
	f := MustFixture(t, repo)
	f.MustRoom("r", bigPolicy(), "lead", "builder", "yu:human", "ops")
	p1 := readFixture(t, "p1.txt")
	p2 := strings.ReplaceAll(readFixture(t, "p2.txt"), "3f9a2c1", sha[:7])
	p3 := readFixture(t, "p3.txt")
	on := func(body, topic string) string { return strings.Replace(body, " limiter ", " "+topic+" ", 1) }
	step := func() { f.Clock.Advance(time.Minute) }

	seqs := map[string]int64{}
	for _, topic := range []string{"limiter", "auth"} {
		seqs[topic+"/p1"] = f.MustPost("r/lead", on(p1, topic)).Seq
		step()
		f.MustPost("r/ops", "plain words between the topics, about "+topic)
		seqs[topic+"/p2"] = f.MustPost("r/builder", on(p2, topic)).Seq
		step()
		seqs[topic+"/p3"] = f.MustPost("r/builder", on(p3, topic)).Seq
		step()
	}
	for i := range 120 { // the big topic, interleaved with the others
		f.MustPost([]string{"r/lead", "r/builder"}[i%2], fmt.Sprintf("v1 decide plan to all n=2\noutcome option %d %s\ncost %d %s\n",
			i, strings.Repeat("long words ", 40), i, strings.Repeat("z", 1500)))
		if i%30 == 7 {
			f.MustPost("r/ops", fmt.Sprintf("v1 note auth to all n=1\nfact ops note %d\n", i))
		}
	}
	// yu settles limiter's proposal on limiter, and auth's from a message on topic limiter;
	// the builder's later report on auth leaves it no todos and a new block.
	f.MustPost("r/yu", fmt.Sprintf("v1 answer limiter to builder re %d n=1\nfact A, with the fail-open\n", seqs["limiter/p3"]))
	f.MustPost("r/yu", fmt.Sprintf("v1 answer limiter to builder re %d n=1\nfact B, in memory\n", seqs["auth/p3"]))
	f.MustPost("r/builder", "v1 report auth to lead n=2\nblock waiting on the key store\ncost 1200 tokens\n")
	f.MustPost("r/lead", fmt.Sprintf("v1 answer auth to builder re %d n=1\nfact skip the route test\n", seqs["limiter/p2"]))
	f.MustPost("r/lead", fmt.Sprintf("v1 answer auth to builder re %d n=1\nfact mock it\n", seqs["auth/p2"]))
	// p1's asks lapse: the server posts each default on its topic.
	f.Clock.Set(time.Date(2026, 9, 17, 18, 0, 1, 0, time.UTC))
	if n, err := f.Svc.LapseDue(t.Context()); n != 2 || err != nil {
		t.Fatalf("LapseDue = %d, %v; want 2 lapses", n, err)
	}

	for _, topic := range []string{"limiter", "auth", "plan"} {
		got, err := f.Svc.State(t.Context(), f.Seats["r/lead"], "r", topic)
		if err != nil {
			t.Fatalf("State(%s): %v", topic, err)
		}
		want, err := f.Svc.StateWholeRoom(t.Context(), "r", topic)
		if err != nil {
			t.Fatalf("StateWholeRoom(%s): %v", topic, err)
		}
		gotJSON, _ := json.Marshal(got)
		wantJSON, _ := json.Marshal(want)
		if !bytes.Equal(gotJSON, wantJSON) || !reflect.DeepEqual(got, want) {
			t.Errorf("State(%s) JSON:\n%s\nwant (from the whole room):\n%s", topic, gotJSON, wantJSON)
		}
		if g, w := room.RenderState(got), room.RenderState(want); g != w {
			t.Errorf("State(%s) text:\n%s\nwant (from the whole room):\n%s", topic, g, w)
		}
		// The record is not empty of what the room gave it: the comparison compares something.
		if topic == "plan" && (got.Dropped == 0 || len(got.Decisions) == 0) {
			t.Errorf("State(plan) dropped %d, %d decisions; want a record over its cap", got.Dropped, len(got.Decisions))
		}
		if topic != "plan" && (len(got.Decisions) < 2 || len(got.Done) == 0 || len(got.Costs) == 0 || len(got.Tokens) < 3) {
			t.Errorf("State(%s) = %s; want decisions, done, costs and tokens", topic, gotJSON)
		}
	}
	_, err := f.Svc.State(t.Context(), f.Seats["r/lead"], "r", "nosuch")
	if code(t, err) != parley.ENOTFOUND {
		t.Errorf("State(nosuch) = %v, want ENOTFOUND", err)
	}
}
