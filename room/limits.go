package room

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/parleyhq/parley"
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
	var few [4]float64 // a post's take is two buckets, or one
	levels := few[:0]
	if len(buckets) > len(few) {
		levels = make([]float64, 0, len(buckets))
	}
	levels = levels[:len(buckets)]
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
