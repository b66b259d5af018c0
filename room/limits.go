package room

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/convention"
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

// The acknowledgement cap. A message is content-free when every fact line is an
// acknowledgement ("ok", "thanks", "ack", "got it", "noted", "+1" …, optionally after one
// plain label word such as `outcome`, and with seat names and punctuation ignored), or when it
// has no fact lines at all. Plain text in a lenient room is judged line by line the same way.
// A message with `re` that answers an open ask is never content-free.
//
// The rule: when the room's last ackRun messages from seats (the server's own excluded) were
// all content-free, another content-free message is refused with EINVALID. Two seats can
// acknowledge each other once; the third "thanks" in a row is the start of a loop that every
// seat pays to read. Waiting would not make it acceptable, so it is not a rate limit.
const ackRun = 2

var ackPhrases = map[string]bool{
	"ok": true, "okay": true, "k": true, "kk": true, "ack": true, "acked": true, "acknowledged": true,
	"noted": true, "thanks": true, "thank you": true, "thx": true, "ty": true, "got it": true,
	"roger": true, "roger that": true, "understood": true, "will do": true, "sounds good": true,
	"great": true, "cool": true, "nice": true, "+1": true, "👍": true, "🙏": true, "received": true,
	"copy": true, "copy that": true, "you too": true, "likewise": true, "no problem": true, "np": true,
	"cheers": true, "perfect": true, "same": true, "confirmed": true, "all good": true,
}

// isAckText reports whether s is nothing but acknowledgement phrases (and seat names).
func isAckText(s string, seats []string) bool {
	s = strings.ToLower(s)
	s = strings.Map(func(r rune) rune {
		if strings.ContainsRune(",.;:!?()-—~", r) {
			return ' '
		}
		return r
	}, s)
	words := strings.Fields(s)
	if len(words) == 0 {
		return true
	}
	for i := 0; i < len(words); {
		switch {
		case i+1 < len(words) && ackPhrases[words[i]+" "+words[i+1]]:
			i += 2
		case ackPhrases[words[i]] || contains(seats, words[i]) || words[i] == "all":
			i++
		default:
			return false
		}
	}
	return true
}

// contentFree applies the rule above to a parsed body.
func contentFree(format, body string, m *convention.Message, seats []string) bool {
	if m != nil {
		for _, l := range m.Lines {
			if l.Reserved {
				return false
			}
			if !isAckText(l.Raw, seats) && !isAckText(l.Text, seats) {
				return false
			}
		}
		return true
	}
	if format != parley.FormatText {
		return false // an AACP packet always carries a task
	}
	for _, l := range strings.Split(body, "\n") {
		if !isAckText(l, seats) {
			return false
		}
	}
	return true
}

// checkAcks refuses the ackRun+1-th content-free message in a row.
func (s *Service) checkAcks(ctx context.Context, room string, d *draft, seats []string) error {
	if !contentFree(d.format, d.body, d.conv, seats) {
		return nil
	}
	if d.re > 0 {
		open, err := s.store.Asks(ctx, room, parley.AskOpen)
		if err != nil {
			return s.internal(ctx, "post: asks", err)
		}
		for _, a := range open {
			if a.Seq == d.re {
				return nil // "ok" can be the answer to an ask
			}
		}
	}
	last, err := s.store.LastSeq(ctx, room)
	if err != nil {
		return s.internal(ctx, "post: last seq", err)
	}
	// The server's own messages are skipped, so look a little further back than ackRun.
	recent, err := s.store.Messages(ctx, room, max(0, last-4*ackRun), 0)
	if err != nil {
		return s.internal(ctx, "post: recent", err)
	}
	run := 0
	for i := len(recent) - 1; i >= 0 && run < ackRun; i-- {
		m := recent[i]
		if m.Seat == parley.SystemSeat {
			continue
		}
		var conv *convention.Message
		if m.Format == parley.FormatConvention {
			conv, _ = convention.Parse(m.Body)
		}
		if !contentFree(m.Format, m.Body, conv, seats) {
			return nil
		}
		run++
	}
	if run < ackRun {
		return nil
	}
	return parley.Errorf(parley.EINVALID, "the last %d messages in room %s were acknowledgements; a third adds nothing", ackRun, room).
		WithHint("silence is fine: post when you have a fact, an answer or a question; acknowledge inside your next real message if you must")
}
