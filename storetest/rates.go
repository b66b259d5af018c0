package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley"
)

// OpenRates returns a new, empty parley.RateStore. When it is also a parley.Store, RunRates
// creates the rooms it uses in it.
type OpenRates func(t *testing.T) parley.RateStore

// RunRates checks the bucket arithmetic of a parley.RateStore against an injected clock: a
// bucket starts full, refills at its rate up to its burst, a refused take takes nothing and
// names the bucket that lacks and the exact wait, takes are all or none, give-backs stop at
// the burst, a clock behind the bucket's refills nothing, buckets are independent, a reset
// fills them, and concurrent takes never grant more than the burst.
func RunRates(t *testing.T, open OpenRates) {
	tests := []struct {
		name string
		fn   func(t *testing.T, rs parley.RateStore)
	}{
		{"StartsFullAndRefills", testRatesRefill},
		{"RefusalTakesNothing", testRatesRefusal},
		{"AllOrNone", testRatesAllOrNone},
		{"GiveBack", testRatesGiveBack},
		{"ClockBehind", testRatesClockBehind},
		{"Tokens", testRatesTokens},
		{"Independent", testRatesIndependent},
		{"Reset", testRatesReset},
		{"Concurrent", testRatesConcurrent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := open(t)
			if s, ok := rs.(parley.Store); ok {
				MustCreateRoom(t, s, "r")
				MustCreateRoom(t, s, "q")
			}
			tt.fn(t, rs)
		})
	}
}

// perMinute is a message bucket of a seat with the given rate and burst.
func perMinute(seat string, rate float64, burst int) parley.RateBucket {
	return parley.RateBucket{Seat: seat, Kind: parley.RateMessages, N: 1, Rate: rate / 60, Burst: float64(burst)}
}

func take(t *testing.T, rs parley.RateStore, room string, now time.Time, bs ...parley.RateBucket) parley.RateTake {
	t.Helper()
	r, err := rs.TakeRate(context.Background(), room, now, bs)
	if err != nil {
		t.Fatalf("take: %v", err)
	}
	return r
}

func mustTake(t *testing.T, rs parley.RateStore, room string, now time.Time, bs ...parley.RateBucket) {
	t.Helper()
	if r := take(t, rs, room, now, bs...); !r.OK {
		t.Fatalf("take at %v refused (bucket %d, wait %v), want it taken", now.Sub(t0), r.Short, r.Wait)
	}
}

// mustRefuse wants a refusal naming bucket short with wait within a millisecond.
func mustRefuse(t *testing.T, rs parley.RateStore, room string, now time.Time, short int, wait time.Duration, bs ...parley.RateBucket) {
	t.Helper()
	r := take(t, rs, room, now, bs...)
	if r.OK {
		t.Fatalf("take at %v was granted, want it refused", now.Sub(t0))
	}
	if r.Short != short {
		t.Errorf("refusal names bucket %d, want %d", r.Short, short)
	}
	if d := r.Wait - wait; d < -time.Millisecond || d > time.Millisecond {
		t.Errorf("wait %v at %v, want %v", r.Wait, now.Sub(t0), wait)
	}
}

func give(t *testing.T, rs parley.RateStore, room string, now time.Time, bs ...parley.RateBucket) {
	t.Helper()
	if err := rs.GiveRate(context.Background(), room, now, bs); err != nil {
		t.Fatalf("give: %v", err)
	}
}

func testRatesRefill(t *testing.T, rs parley.RateStore) {
	b := perMinute("a", 6, 3) // one every 10s
	for range 3 {
		mustTake(t, rs, "r", t0, b)
	}
	mustRefuse(t, rs, "r", t0, 0, 10*time.Second, b)
	mustRefuse(t, rs, "r", t0.Add(4*time.Second), 0, 6*time.Second, b)
	mustTake(t, rs, "r", t0.Add(10*time.Second), b)
	mustRefuse(t, rs, "r", t0.Add(10*time.Second), 0, 10*time.Second, b)
	// A long quiet refills to the burst and no further.
	later := t0.Add(time.Hour)
	for range 3 {
		mustTake(t, rs, "r", later, b)
	}
	mustRefuse(t, rs, "r", later, 0, 10*time.Second, b)
}

func testRatesRefusal(t *testing.T, rs parley.RateStore) {
	b := perMinute("a", 6, 1)
	mustTake(t, rs, "r", t0, b)
	// Hammering while refused does not push the wait back.
	for i := range 50 {
		now := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		mustRefuse(t, rs, "r", now, 0, 10*time.Second-now.Sub(t0), b)
	}
	mustTake(t, rs, "r", t0.Add(10*time.Second), b)
}

func testRatesAllOrNone(t *testing.T, rs parley.RateStore) {
	seat := perMinute("a", 6, 5)
	room := perMinute("", 6, 1)
	mustTake(t, rs, "r", t0, seat, room)
	mustRefuse(t, rs, "r", t0, 1, 10*time.Second, seat, room)
	// The refused take left the seat's bucket alone: it holds 4.
	for range 4 {
		mustTake(t, rs, "r", t0, seat)
	}
	mustRefuse(t, rs, "r", t0, 0, 10*time.Second, seat)
	// The first bucket that lacks is named, even when a later one lacks too.
	mustRefuse(t, rs, "r", t0, 0, 10*time.Second, seat, room)
}

func testRatesGiveBack(t *testing.T, rs parley.RateStore) {
	b := perMinute("a", 6, 3)
	for range 3 {
		mustTake(t, rs, "r", t0, b)
	}
	give(t, rs, "r", t0, b)
	mustTake(t, rs, "r", t0, b)
	mustRefuse(t, rs, "r", t0, 0, 10*time.Second, b)
	// Giving back more than was taken stops at the burst.
	for range 10 {
		give(t, rs, "r", t0, b)
	}
	for range 3 {
		mustTake(t, rs, "r", t0, b)
	}
	mustRefuse(t, rs, "r", t0, 0, 10*time.Second, b)
	// A give-back counts the refill since, too: 5s refilled half a message, plus one.
	give(t, rs, "r", t0.Add(5*time.Second), b)
	mustTake(t, rs, "r", t0.Add(5*time.Second), b)
	mustRefuse(t, rs, "r", t0.Add(5*time.Second), 0, 5*time.Second, b)
}

func testRatesClockBehind(t *testing.T, rs parley.RateStore) {
	b := perMinute("a", 6, 3)
	ahead := t0.Add(time.Minute)
	mustTake(t, rs, "r", ahead, b)
	// Another process whose clock is a minute behind takes one: no refill, and the bucket's
	// time stays where it was, so the fast clock does not get the minute back either.
	mustTake(t, rs, "r", t0, b)
	mustTake(t, rs, "r", ahead, b)
	mustRefuse(t, rs, "r", ahead, 0, 10*time.Second, b)
	mustRefuse(t, rs, "r", t0, 0, 10*time.Second, b)
	give(t, rs, "r", t0, b)
	mustTake(t, rs, "r", ahead, b)
	mustRefuse(t, rs, "r", ahead.Add(5*time.Second), 0, 5*time.Second, b)
	mustTake(t, rs, "r", ahead.Add(10*time.Second), b)
}

func testRatesTokens(t *testing.T, rs parley.RateStore) {
	tok := func(n int) parley.RateBucket {
		return parley.RateBucket{Seat: "a", Kind: parley.RateTokens, N: float64(n), Rate: 20000.0 / 60, Burst: 20000}
	}
	mustTake(t, rs, "r", t0, tok(15000))
	// 5000 left; 10000 wants 5000 more at 333.3/s: 15s.
	mustRefuse(t, rs, "r", t0, 0, 15*time.Second, tok(10000))
	mustTake(t, rs, "r", t0, tok(5000))
	// 3s refill 1000.
	mustRefuse(t, rs, "r", t0.Add(3*time.Second), 0, 3*time.Second, tok(2000))
	mustTake(t, rs, "r", t0.Add(3*time.Second), tok(1000))
	// A fractional rate adds up to whole messages exactly enough.
	slow := parley.RateBucket{Seat: "b", Kind: parley.RateMessages, N: 1, Rate: 0.1 / 60, Burst: 1}
	mustTake(t, rs, "r", t0, slow)
	mustRefuse(t, rs, "r", t0.Add(599*time.Second), 0, time.Second, slow)
	mustTake(t, rs, "r", t0.Add(600*time.Second), slow)
	// A rate of almost nothing still gives a wait that a Retry-After can carry.
	tiny := parley.RateBucket{Seat: "c", Kind: parley.RateMessages, N: 1, Rate: 1e-300, Burst: 1}
	mustTake(t, rs, "r", t0, tiny)
	if r := take(t, rs, "r", t0, tiny); r.OK || r.Wait < time.Hour || r.Wait > 1e6*time.Second {
		t.Errorf("at a rate of 1e-300: %+v, want a refusal with a wait of at most 1e6 s", r)
	}
}

func testRatesIndependent(t *testing.T, rs parley.RateStore) {
	a := perMinute("a", 6, 1)
	for _, b := range []parley.RateBucket{
		a,
		perMinute("b", 6, 1), // another seat
		perMinute("", 6, 1),  // the room's own
		{Seat: "a", Kind: parley.RateTokens, N: 1, Rate: 0.1, Burst: 1}, // the seat's tokens
	} {
		mustTake(t, rs, "r", t0, b)
		mustRefuse(t, rs, "r", t0, 0, 10*time.Second, b)
	}
	mustTake(t, rs, "q", t0, a) // the same seat name in another room
}

func testRatesReset(t *testing.T, rs parley.RateStore) {
	a := perMinute("a", 6, 2)
	for _, room := range []string{"r", "q"} {
		mustTake(t, rs, room, t0, a)
		mustTake(t, rs, room, t0, a)
	}
	if err := rs.ResetRates(context.Background(), "r"); err != nil {
		t.Fatalf("reset: %v", err)
	}
	mustTake(t, rs, "r", t0, a)
	mustTake(t, rs, "r", t0, a)
	mustRefuse(t, rs, "r", t0, 0, 10*time.Second, a)
	mustRefuse(t, rs, "q", t0, 0, 10*time.Second, a)
}

func testRatesConcurrent(t *testing.T, rs parley.RateStore) {
	seat := perMinute("a", 0.001, 10)
	room := perMinute("", 0.001, 25)
	var mu sync.Mutex
	granted := map[string]int{}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for range 10 {
				// Half the workers post as seat a, half as seats of their own: a's burst
				// and then the room's run out, never more.
				bs := []parley.RateBucket{seat, room}
				who := "a"
				if w%2 == 1 {
					who = fmt.Sprintf("w%d", w)
					bs[0] = perMinute(who, 0.001, 10)
				}
				r, err := rs.TakeRate(context.Background(), "r", t0, bs)
				if err != nil {
					t.Errorf("take: %v", err)
					return
				}
				if r.OK {
					mu.Lock()
					granted[who]++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	total := 0
	for who, n := range granted {
		total += n
		if n > 10 {
			t.Errorf("seat %s got %d, more than its burst of 10", who, n)
		}
	}
	if total != 25 {
		t.Errorf("granted %d in all (%v), want the room's burst of 25", total, granted)
	}
}
