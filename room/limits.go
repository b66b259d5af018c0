package room

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/convention"
)

// The rate caps. Each seat has a message bucket (Policy.SeatMessagesPerMinute, burst
// SeatBurst) and a token bucket (SeatTokensPerMinute, burst one minute's worth), and the room
// has a message bucket (RoomMessagesPerMinute, burst RoomBurst); see parley.RateBucket for the
// arithmetic. What a post costs:
//
//   - Admission, right after the seat is authenticated and before any parsing or lookup,
//     takes one message from the seat's bucket and one from the room's, both or neither.
//     Every post pays it, refused ones too (invalid, too large, a repeat, a secret, the
//     acknowledgement cap), so that a flood of refusals meets 429 as soon as any flood
//     would, and costs the server little once it does.
//   - Tokens are taken from the seat's token bucket only once every check has passed, just
//     before the append, so a refused post costs no tokens (a refused 65 KB body would
//     otherwise cost a minute's worth).
//   - The room's bucket is for messages the room stores: a post that is refused gets its
//     room message back (and its tokens, when the append itself refuses a repeat that
//     raced its original). The seat keeps paying its one message.
//   - A post that is not stored through no fault of the seat gets everything back: a server
//     fault, or an Idempotency-Key whose post another request stored first. A replay of an
//     Idempotency-Key costs nothing, and is answered even over the cap.
//   - A 429 takes nothing, so retrying during the wait does not lengthen it. A post refused
//     for lack of tokens has passed admission and keeps its one message: the seat's message
//     bucket bounds how often it can make the server tokenize large bodies.
//
// The buckets live in the store when it implements parley.RateStore (PostgreSQL: shared by
// every `parley serve` process on the database) and in this process's memory otherwise
// (SQLite, which one process serves).
type limits struct {
	shared parley.RateStore // the store's buckets, or nil
	mem    memRates
}

func (l *limits) init(store parley.Store) {
	l.shared, _ = store.(parley.RateStore)
	l.mem.b = map[rateKey]*memBucket{}
}

func (l *limits) rates() parley.RateStore {
	if l.shared != nil {
		return l.shared
	}
	return &l.mem
}

// forget makes the room's buckets start full, under a new policy.
func (l *limits) forget(room string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l.rates().ResetRates(ctx, room) // on failure the old levels stay, within the new bursts
}

func seatMessages(seat string, p parley.Policy) parley.RateBucket {
	return parley.RateBucket{Seat: seat, Kind: parley.RateMessages, N: 1, Rate: p.SeatMessagesPerMinute / 60, Burst: float64(p.SeatBurst)}
}

func roomMessages(p parley.Policy) parley.RateBucket {
	return parley.RateBucket{Kind: parley.RateMessages, N: 1, Rate: p.RoomMessagesPerMinute / 60, Burst: float64(p.RoomBurst)}
}

// seatTokens is one minute's worth deep, so that a seat may spend its minute in one message.
func seatTokens(seat string, n int, p parley.Policy) parley.RateBucket {
	return parley.RateBucket{Seat: seat, Kind: parley.RateTokens, N: float64(n), Rate: float64(p.SeatTokensPerMinute) / 60, Burst: float64(p.SeatTokensPerMinute)}
}

// charge is what one post has taken from the buckets, until settle decides what it keeps.
type charge struct {
	s          *Service
	room, seat string
	p          parley.Policy
	tokens     int // taken from the seat's token bucket
}

// admit takes the post's message from the seat's and the room's buckets. Over the cap it
// returns an ERATELIMIT with Fields["retry_after"] in whole seconds, at least 1, unless key
// names a post the seat already stored: a retry gets its original answer (rep non-nil).
func (s *Service) admit(ctx context.Context, room, seat string, p parley.Policy, key string) (ch *charge, rep *parley.PostResult, err error) {
	buckets := []parley.RateBucket{seatMessages(seat, p), roomMessages(p)}
	took, err := s.limits.rates().TakeRate(ctx, room, s.now().UTC(), buckets)
	if err != nil {
		return nil, nil, s.internal(ctx, "post: rate caps", err)
	}
	if !took.OK {
		if key != "" && checkKey(key) == nil {
			if orig, err := s.store.ByIdempotencyKey(ctx, room, seat, key); err == nil {
				return nil, replay(orig), nil
			}
		}
		return nil, nil, rateError(room, seat, p, buckets[took.Short], took.Wait)
	}
	return &charge{s: s, room: room, seat: seat, p: p}, nil, nil
}

// takeTokens takes the post's tokens from the seat's token bucket, once every check has
// passed.
func (c *charge) takeTokens(ctx context.Context, tokens int) error {
	if tokens > c.p.SeatTokensPerMinute {
		return parley.Errorf(parley.ETOOLARGE, "the message is %d tokens; a seat may post at most %d a minute", tokens, c.p.SeatTokensPerMinute).
			WithHint("split it, or send the bulk as a reference (a path, a commit) and keep the facts")
	}
	if tokens <= 0 {
		return nil
	}
	b := seatTokens(c.seat, tokens, c.p)
	took, err := c.s.limits.rates().TakeRate(ctx, c.room, c.s.now().UTC(), []parley.RateBucket{b})
	if err != nil {
		return c.s.internal(ctx, "post: token cap", err)
	}
	if !took.OK {
		return rateError(c.room, c.seat, c.p, b, took.Wait)
	}
	c.tokens = tokens
	return nil
}

// settle gives back what the post's outcome does not keep: nothing for a stored post; the
// room's message and the tokens for a refused one; everything for a replay or a server fault.
func (c *charge) settle(ctx context.Context, res *parley.PostResult, err error) {
	if c == nil || (err == nil && res != nil && !res.Replay) {
		return
	}
	var back []parley.RateBucket
	if (res != nil && res.Replay) || parley.ErrorCode(err) == parley.EINTERNAL {
		back = append(back, seatMessages(c.seat, c.p))
	}
	back = append(back, roomMessages(c.p))
	if c.tokens > 0 {
		back = append(back, seatTokens(c.seat, c.tokens, c.p))
	}
	// The client may have gone; what it took goes back all the same.
	gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if gerr := c.s.limits.rates().GiveRate(gctx, c.room, c.s.now().UTC(), back); gerr != nil {
		c.s.log.WarnContext(ctx, "room: giving back a refused post's rate allowance", "room", c.room, "seat", c.seat, "err", gerr)
	}
}

// rateError is the 429 for bucket b, which lacks for wait.
func rateError(room, seat string, p parley.Policy, b parley.RateBucket, wait time.Duration) error {
	var what string
	switch {
	case b.Seat == "":
		what = fmt.Sprintf("room %s takes %s messages a minute (burst %d)", room, fmtRate(p.RoomMessagesPerMinute), p.RoomBurst)
	case b.Kind == parley.RateTokens:
		what = fmt.Sprintf("seat %s may post %d tokens a minute", seat, p.SeatTokensPerMinute)
	default:
		what = fmt.Sprintf("seat %s may post %s messages a minute (burst %d)", seat, fmtRate(p.SeatMessagesPerMinute), p.SeatBurst)
	}
	secs := max(1, int(math.Ceil(wait.Seconds())))
	return parley.Errorf(parley.ERATELIMIT, "rate cap: %s; try again in %ds", what, secs).
		WithHint("wait, and post less often: every post counts, refused ones too; batch facts into one message, and skip acknowledgements").
		With("retry_after", secs)
}

// memRates keeps rate buckets in memory, for a store that one process serves.
type memRates struct {
	mu sync.Mutex
	b  map[rateKey]*memBucket
}

type rateKey struct{ room, seat, kind string }

type memBucket struct {
	level float64
	at    time.Time
}

var _ parley.RateStore = (*memRates)(nil)

// rateSlack absorbs rounding: a bucket that refilled to 0.9999999999 of a message holds one.
const rateSlack = 1e-9

// refill is what a bucket that held level at time at holds at now.
func refill(level float64, at, now time.Time, rate, burst float64) float64 {
	if d := now.Sub(at); d > 0 {
		level += rate * d.Seconds()
	}
	return min(level, burst)
}

func (m *memRates) get(room string, b parley.RateBucket, now time.Time) *memBucket {
	k := rateKey{room, b.Seat, b.Kind}
	mb := m.b[k]
	if mb == nil {
		mb = &memBucket{level: b.Burst, at: now}
		m.b[k] = mb
	}
	return mb
}

func (m *memRates) TakeRate(_ context.Context, room string, now time.Time, buckets []parley.RateBucket) (parley.RateTake, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	levels := make([]float64, len(buckets))
	for i, b := range buckets {
		mb := m.get(room, b, now)
		levels[i] = refill(mb.level, mb.at, now, b.Rate, b.Burst)
		if levels[i] < b.N-rateSlack {
			// A rate of almost nothing would overflow the Duration: a million seconds is
			// "not soon" enough.
			wait := time.Duration(min((b.N-levels[i])/b.Rate, 1e6) * float64(time.Second))
			return parley.RateTake{Short: i, Wait: max(wait, time.Microsecond)}, nil
		}
	}
	for i, b := range buckets {
		mb := m.get(room, b, now)
		mb.level = max(0, levels[i]-b.N)
		if now.After(mb.at) {
			mb.at = now
		}
	}
	return parley.RateTake{OK: true}, nil
}

func (m *memRates) GiveRate(_ context.Context, room string, now time.Time, buckets []parley.RateBucket) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, b := range buckets {
		mb := m.get(room, b, now)
		mb.level = min(b.Burst, refill(mb.level, mb.at, now, b.Rate, b.Burst)+b.N)
		if now.After(mb.at) {
			mb.at = now
		}
	}
	return nil
}

func (m *memRates) ResetRates(_ context.Context, room string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.b {
		if k.room == room {
			delete(m.b, k)
		}
	}
	return nil
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
