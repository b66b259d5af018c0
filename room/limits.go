package room

import (
	"fmt"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/parleyhq/parley"
)

// limits holds the rate limiters, in memory, per room and seat. They are built from the room's
// policy and rebuilt when it changes. Several server processes each keep their own, so behind a
// load balancer the caps are per process: a seat can post at most the cap times the number of
// processes. The store's dedup, which is shared, is the stronger guard against loops.
type limits struct {
	mu    sync.Mutex
	rooms map[string]*roomLimits
}

type roomLimits struct {
	policy parley.Policy
	msgs   *rate.Limiter
	seats  map[string]*seatLimits
}

type seatLimits struct {
	msgs   *rate.Limiter
	tokens *rate.Limiter
}

func (l *limits) forget(room string) {
	l.mu.Lock()
	delete(l.rooms, room)
	l.mu.Unlock()
}

// reserve takes one message from the seat's and the room's message allowance and tokens from
// the seat's token allowance, all or none. It returns a release func that gives them back
// (for a post that is refused later or fails to store) or an ERATELIMIT with
// Fields["retry_after"] in whole seconds, at least 1.
func (l *limits) reserve(room, seat string, p parley.Policy, now time.Time, tokens int) (func(), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	rl := l.rooms[room]
	if rl == nil || rl.policy != p {
		rl = &roomLimits{
			policy: p,
			msgs:   rate.NewLimiter(rate.Limit(p.RoomMessagesPerMinute/60), p.RoomBurst),
			seats:  map[string]*seatLimits{},
		}
		l.rooms[room] = rl
	}
	sl := rl.seats[seat]
	if sl == nil {
		sl = &seatLimits{
			msgs: rate.NewLimiter(rate.Limit(p.SeatMessagesPerMinute/60), p.SeatBurst),
			// The burst is one minute's worth, so a seat may spend its minute in one message.
			tokens: rate.NewLimiter(rate.Limit(float64(p.SeatTokensPerMinute)/60), p.SeatTokensPerMinute),
		}
		rl.seats[seat] = sl
	}
	if tokens > p.SeatTokensPerMinute {
		return nil, parley.Errorf(parley.ETOOLARGE, "the message is %d tokens; a seat may post at most %d a minute", tokens, p.SeatTokensPerMinute).
			WithHint("split it, or send the bulk as a reference (a path, a commit) and keep the facts")
	}

	type held struct {
		r    *rate.Reservation
		what string
	}
	var got []held
	cancel := func() {
		for _, h := range got {
			h.r.CancelAt(now)
		}
	}
	for _, h := range []struct {
		lim  *rate.Limiter
		n    int
		what string
	}{
		{sl.msgs, 1, fmt.Sprintf("seat %s may post %s messages a minute (burst %d)", seat, fmtRate(p.SeatMessagesPerMinute), p.SeatBurst)},
		{sl.tokens, tokens, fmt.Sprintf("seat %s may post %d tokens a minute", seat, p.SeatTokensPerMinute)},
		{rl.msgs, 1, fmt.Sprintf("room %s takes %s messages a minute (burst %d)", room, fmtRate(p.RoomMessagesPerMinute), p.RoomBurst)},
	} {
		if h.n == 0 {
			continue
		}
		r := h.lim.ReserveN(now, h.n)
		if !r.OK() {
			cancel()
			return nil, parley.Errorf(parley.ERATELIMIT, "%s", h.what)
		}
		got = append(got, held{r, h.what})
		if d := r.DelayFrom(now); d > 0 {
			cancel()
			secs := int(math.Ceil(d.Seconds()))
			return nil, parley.Errorf(parley.ERATELIMIT, "rate cap: %s; try again in %ds", h.what, secs).
				WithHint("wait, and post less often: batch facts into one message, and skip acknowledgements").
				With("retry_after", secs)
		}
	}
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		cancel()
	}, nil
}

func fmtRate(perMinute float64) string {
	if perMinute == math.Trunc(perMinute) {
		return fmt.Sprintf("%d", int64(perMinute))
	}
	return fmt.Sprintf("%.2g", perMinute)
}
