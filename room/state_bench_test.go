package room_test

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/parleyhq/parley"
)

// BenchmarkStateByTopic measures State of one topic of 500 messages in a room that holds only
// them (small) and in a room of 50,000 messages where the other 49,500 are on 99 other topics
// (large), on SQLite. Reading by topic, the two cost about the same; large_whole_room is the
// record built from every message of the large room, as State did before.
func BenchmarkStateByTopic(b *testing.B) {
	const topicMessages, others = 500, 99 // 99 messages of other topics after each of the topic's
	f := MustFixture(b, "")
	f.MustRoom("small", benchPolicy, "lead", "builder", "yu")
	f.MustRoom("large", benchPolicy, "lead", "builder", "yu")
	bodies := stateBenchBodies(b, topicMessages)
	post := func(room string, i int, proposal *int64) {
		body := bodies[i]
		text := strings.ReplaceAll(body.text, "re PROPOSAL", fmt.Sprintf("re %d", *proposal))
		seq := f.MustPost(room+"/"+body.who, text).Seq
		if body.proposal {
			*proposal = seq
		}
	}
	var proposal int64
	for i := range bodies {
		post("small", i, &proposal)
	}

	// The other topics' messages go straight to the store, many at once so that they share
	// commits: 49,500 posts through the pipeline one by one would take minutes.
	filler := readFixture(b, "p2.txt")
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range 32 {
		go func() {
			for i := range jobs {
				topic := fmt.Sprintf("topic%02d", i%others)
				body := strings.Replace(filler, " limiter ", " "+topic+" ", 1) + fmt.Sprintf("fact filler %d\n", i)
				h := sha256.Sum256([]byte(body))
				if _, err := f.Store.Append(b.Context(), &parley.Append{Message: &parley.Message{
					Room: "large", Seat: "builder", Time: f.Clock.Now(), Format: parley.FormatConvention,
					Topic: topic, Intent: "report", Body: body, Tokens: 130, Hash: h[:],
				}}); err != nil {
					b.Error(err)
				}
				wg.Done()
			}
		}()
	}
	proposal = 0
	for i := range bodies {
		post("large", i, &proposal)
		wg.Add(others)
		for j := range others {
			jobs <- i*others + j
		}
		wg.Wait()
	}
	close(jobs)
	if last, err := f.Store.LastSeq(b.Context(), "large"); err != nil || last != topicMessages*(1+others) {
		b.Fatalf("large room: last seq %d, %v", last, err)
	}

	// The topic holds the same in both rooms, so both records hold the same items (kept or
	// dropped: longer seqs take more of the cap) and the builder's tokens.
	shape := func(room string) string {
		rec, err := f.Svc.State(b.Context(), f.Seats[room+"/lead"], room, "limiter")
		if err != nil {
			b.Fatal(err)
		}
		items := len(rec.OpenAsks) + len(rec.Decisions) + len(rec.Done) + len(rec.Claims) + len(rec.Todos) +
			len(rec.Blocks) + len(rec.Costs) + rec.Dropped
		return fmt.Sprintf("%d items, %d decisions, builder %d tokens", items, len(rec.Decisions), rec.Tokens["builder"])
	}
	if small, large := shape("small"), shape("large"); small != large {
		b.Fatalf("the topic's records differ: small %s, large %s", small, large)
	}
	lead := f.Seats["small/lead"]
	for _, tt := range []struct {
		name string
		run  func() (*parley.StateRecord, error)
	}{
		{"small", func() (*parley.StateRecord, error) { return f.Svc.State(b.Context(), lead, "small", "limiter") }},
		{"large", func() (*parley.StateRecord, error) {
			return f.Svc.State(b.Context(), f.Seats["large/lead"], "large", "limiter")
		}},
		{"large_whole_room", func() (*parley.StateRecord, error) { return f.Svc.StateWholeRoom(b.Context(), "large", "limiter") }},
	} {
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rec, err := tt.run()
				if err != nil || rec.LastSeq == 0 {
					b.Fatalf("state: %v", err)
				}
			}
		})
	}
}

// stateBenchBody is a message of the benchmark's topic; "re PROPOSAL" in text stands for the
// seq of the latest proposal.
type stateBenchBody struct {
	who, text string
	proposal  bool
}

// stateBenchBodies returns n messages on topic limiter, as a task's thread has them: reports
// with done, claims, todos and costs, proposals with asks, and answers that decide.
func stateBenchBodies(b *testing.B, n int) []stateBenchBody {
	p2, p3 := readFixture(b, "p2.txt"), readFixture(b, "p3.txt")
	var out []stateBenchBody
	for i := range n {
		switch i % 4 {
		case 0, 1:
			out = append(out, stateBenchBody{who: "builder", text: strings.Replace(p2, "eta mock lands", fmt.Sprintf("eta step %d lands", i), 1)})
		case 2:
			out = append(out, stateBenchBody{who: "builder", proposal: true,
				text: strings.Replace(p3, "approvals none beyond the decider", fmt.Sprintf("approvals none beyond the decider, round %d", i), 1)})
		case 3:
			out = append(out, stateBenchBody{who: "yu", text: fmt.Sprintf("v1 answer limiter to builder re PROPOSAL n=1\nfact A, round %d\n", i)})
		}
	}
	return out
}
