package reliability_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/parleyhq/parley/internal/servertest"
)

// TestCrashLoopingSeat is an agent that restarts and re-sends its last message, 100 times,
// ten at once, each time with a fresh Idempotency-Key (a restarted process has forgotten its
// old one): dedup must store it once and answer every repeat 409 with the original's seq.
func TestCrashLoopingSeat(t *testing.T) {
	srv := servertest.InProcess(t, servertest.InProcessOptions{})
	srv.CreateRoom(t, "loop", servertest.Generous())
	tok := srv.AddSeat(t, "loop", "looper", "agent")
	srv.AddSeat(t, "loop", "lead", "agent")
	body := []byte("v1 report deploy to lead n=2\noutcome partial\nblock waiting for the migration lock\n")

	var mu sync.Mutex
	status := map[int]int{}
	seqs := map[int64]int{}
	var wg sync.WaitGroup
	for w := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				r := srv.Call(t, "POST", "/v1/rooms/loop/messages", tok, body, "Idempotency-Key", fmt.Sprintf("restart-%d-%d", w, i))
				var out struct{ Seq int64 }
				if r.Status == http.StatusConflict {
					e := r.Err()
					out.Seq = e.Seq
					if e.Error.Code != "conflict" || !strings.Contains(e.Error.Message, "repeats your message #") {
						t.Errorf("repeat: %s", r)
					}
				} else if r.JSON(&out) != nil {
					t.Errorf("answer: %s", r)
				}
				mu.Lock()
				status[r.Status]++
				seqs[out.Seq]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if status[http.StatusCreated] != 1 || status[http.StatusConflict] != 99 {
		t.Errorf("statuses %v, want one 201 and 99 409", status)
	}
	if len(seqs) != 1 || seqs[1] != 100 {
		t.Errorf("seqs answered %v, want #1 for all 100", seqs)
	}
	entries, _ := servertest.ParseHistory(srv.History(t, "loop", srv.Admin))
	if len(entries) != 1 {
		t.Errorf("history holds %d messages, want 1", len(entries))
	}
	var stats struct {
		DedupTokens map[string]int64 `json:"dedup_tokens"`
	}
	if r := srv.Call(t, "GET", "/v1/rooms/loop/stats", srv.Admin, nil); r.JSON(&stats) != nil || stats.DedupTokens["looper"] == 0 {
		t.Errorf("stats do not count the refused repeats: %s", r)
	}
}

// TestSeatOverItsCap has one seat post past its cap while the others post at their own pace:
// only the runaway seat is refused, with a Retry-After that matches its rate.
func TestSeatOverItsCap(t *testing.T) {
	srv := servertest.InProcess(t, servertest.InProcessOptions{})
	srv.CreateRoom(t, "cap", map[string]any{
		"seat_messages_per_minute": 6, "seat_burst": 3,
		"room_messages_per_minute": 6000, "room_burst": 1000,
	})
	names := []string{"runaway", "b", "c", "d"}
	tokens := map[string]string{}
	for _, n := range names {
		tokens[n] = srv.AddSeat(t, "cap", n, "agent")
	}
	post := func(seat string, i int) servertest.Response {
		return srv.Call(t, "POST", "/v1/rooms/cap/messages", tokens[seat], fmt.Appendf(nil, "v1 note load to all n=1\nfact %s step %d\n", seat, i))
	}
	for i := range 3 {
		if r := post("runaway", i); r.Status != http.StatusCreated {
			t.Fatalf("post %d within the burst: %s", i, r)
		}
	}
	for i := 3; i < 20; i++ {
		r := post("runaway", i)
		checkAnswer(t, r, http.StatusTooManyRequests, "rate_limited", "seat runaway may post 6 messages a minute (burst 3)")
		ra, err := strconv.Atoi(r.Header.Get("Retry-After"))
		if err != nil || ra < 1 || ra > 10 || ra != r.Err().RetryAfter {
			t.Fatalf("Retry-After %q, retry_after %d: want the same whole seconds, 1..10 at 6 a minute", r.Header.Get("Retry-After"), r.Err().RetryAfter)
		}
		// Everyone else is unaffected, even while the runaway keeps trying.
		if i < 6 {
			for _, other := range names[1:] {
				if r := post(other, i); r.Status != http.StatusCreated {
					t.Fatalf("%s while runaway is capped: %s", other, r)
				}
			}
		}
	}
	entries, _ := servertest.ParseHistory(srv.History(t, "cap", srv.Admin))
	if len(entries) != 3+3*3 {
		t.Errorf("history holds %d messages, want 12: refused posts must not be stored", len(entries))
	}
}

// TestRoomCap fills a room's shared allowance: the seat that overflows it is told it is the
// room's cap, not its own.
func TestRoomCap(t *testing.T) {
	srv := servertest.InProcess(t, servertest.InProcessOptions{})
	srv.CreateRoom(t, "busy", map[string]any{"room_messages_per_minute": 60, "room_burst": 5})
	var last servertest.Response
	for i := range 6 {
		tok := srv.AddSeat(t, "busy", fmt.Sprintf("s%d", i), "agent")
		last = srv.Call(t, "POST", "/v1/rooms/busy/messages", tok, fmt.Appendf(nil, "v1 note load to all n=1\nfact seat %d\n", i))
		if i < 5 && last.Status != http.StatusCreated {
			t.Fatalf("post %d within the room's burst: %s", i, last)
		}
	}
	checkAnswer(t, last, http.StatusTooManyRequests, "rate_limited", "room busy takes 60 messages a minute (burst 5)")
	if last.Header.Get("Retry-After") == "" {
		t.Error("no Retry-After")
	}
}

// TestAcknowledgementLoop has two seats thank each other: room/ refuses the third
// content-free message in a row (see room.ackRun), whoever sends it, and lets the loop
// restart only after a message with content; an "ok" that answers an open ask is content.
func TestAcknowledgementLoop(t *testing.T) {
	srv := servertest.InProcess(t, servertest.InProcessOptions{})
	srv.CreateRoom(t, "acks", servertest.Generous())
	tok := map[string]string{"a": srv.AddSeat(t, "acks", "a", "agent"), "b": srv.AddSeat(t, "acks", "b", "agent")}
	say := func(from, to, line string) servertest.Response {
		return srv.Call(t, "POST", "/v1/rooms/acks/messages", tok[from], fmt.Appendf(nil, "v1 note sync to %s n=1\n%s\n", to, line))
	}
	want := func(r servertest.Response, status int) {
		t.Helper()
		if r.Status != status {
			t.Fatalf("status %d, want %d: %s", r.Status, status, r)
		}
	}
	want(say("a", "b", "thanks b"), 201)
	want(say("b", "a", "ok, got it"), 201)
	r := say("a", "b", "noted")
	checkAnswer(t, r, 422, "invalid", "were acknowledgements; a third adds nothing")
	checkAnswer(t, say("b", "a", "+1"), 422, "invalid", "were acknowledgements")
	checkAnswer(t, say("a", "all", "cheers all!"), 422, "invalid", "were acknowledgements")

	// A fact breaks the run; then two acknowledgements fit again, and not a third.
	want(say("a", "b", "fact the limiter ships at 60 req/min"), 201)
	want(say("b", "a", "thanks"), 201)
	want(say("a", "b", "you too"), 201)
	checkAnswer(t, say("b", "a", "np"), 422, "invalid", "were acknowledgements")

	// An ok that answers b's open ask closes it, so it is not content-free.
	q := srv.Call(t, "POST", "/v1/rooms/acks/messages", tok["b"], []byte("v1 request sync to a n=1\nask ship on friday?\n"))
	want(q, 201)
	var asked struct{ Seq int64 }
	q.JSON(&asked)
	want(say("b", "a", "nice"), 201)
	want(say("a", "b", "ok"), 201)
	want(srv.Call(t, "POST", "/v1/rooms/acks/messages", tok["a"], fmt.Appendf(nil, "v1 answer sync to b re %d n=1\nok\n", asked.Seq)), 201)

	entries, _ := servertest.ParseHistory(srv.History(t, "acks", srv.Admin))
	if len(entries) != 9 {
		t.Errorf("history holds %d messages, want 9", len(entries))
	}
}
