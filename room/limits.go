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
//
// When the takes happen. Taking admission first and the tokens later is two takes, and on
// PostgreSQL each is a round trip that most of a post's cost follows. So a post whose seat
// is not known to be over a cap defers its admission: the one take just before the append
// takes the seat's message, the room's and the tokens together (takeTokens), and a post
// refused before that takes its admission as it is refused (settle). Every answer and every
// bucket ends as if admission had come first: a post over a message cap gets the 429 (or its
// replay) whatever else is wrong with it, a refused post keeps costing the seat its message,
// and a post refused for lack of tokens keeps its message, as below. Only the work done
// before a 429 differs, so a seat seen over a message cap in the last wait (hot) takes its
// admission first again, and a flood of posts meets its 429 before any parsing.
type limits struct {
	shared parley.RateStore // the store's buckets, or nil
	mem    memRates
	hot    hotSeats
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
	l.hot.forget(room)
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
	key        string
	admitted   bool // the post's message is taken from the seat's and the room's buckets
	overCap    bool // admission was refused: the answer is the 429 (or the replay)
	tokens     int  // taken from the seat's token bucket
	// A repeat refused before admission was taken, and its tokens: its counters wait for it.
	repeated     bool
	repeatTokens int
	// The buckets of takeTokens' one take, kept here rather than in an allocation of its own
	// (the rates' TakeRate, behind an interface, keeps any slice it is given off the stack).
	few [3]parley.RateBucket
}

// refuseDuplicate is the refusal of a repeat found before the post was stored. Its dedup
// counters wait for admission when that is not taken yet (settle): a post over a message cap
// is answered the 429 and counts no repeat, as when admission came first.
func (c *charge) refuseDuplicate(ctx context.Context, orig int64, tokens int) error {
	if c.admitted {
		return c.s.refuseDuplicate(ctx, c.room, c.seat, orig, tokens)
	}
	c.repeated, c.repeatTokens = true, tokens
	return duplicateError(orig)
}

// admit begins the post's charge. For a seat over a message cap lately (limits.hot) it takes
// the post's message from the seat's and the room's buckets at once; over the cap it returns
// an ERATELIMIT with Fields["retry_after"] in whole seconds, at least 1, unless key names a
// post the seat already stored: a retry gets its original answer (rep non-nil). Otherwise
// admission waits for takeTokens, or for settle when the post is refused before.
func (s *Service) admit(ctx context.Context, room, seat string, p parley.Policy, key string) (ch *charge, rep *parley.PostResult, err error) {
	ch = &charge{s: s, room: room, seat: seat, p: p, key: key}
	if !s.limits.hot.is(room, seat, s.now().UTC()) {
		return ch, nil, nil
	}
	if rep, err := ch.admitNow(ctx); rep != nil || err != nil {
		return nil, rep, err
	}
	return ch, nil, nil
}

// admitNow takes the post's message from the seat's and the room's buckets, both or neither.
func (c *charge) admitNow(ctx context.Context) (*parley.PostResult, error) {
	buckets := []parley.RateBucket{seatMessages(c.seat, c.p), roomMessages(c.p)}
	took, err := c.s.limits.rates().TakeRate(ctx, c.room, c.s.now().UTC(), buckets)
	if err != nil {
		return nil, c.s.internal(ctx, "post: rate caps", err)
	}
	if !took.OK {
		return c.refuseAdmission(ctx, buckets[took.Short], took.Wait)
	}
	c.admitted = true
	return nil, nil
}

// refuseAdmission answers a post over a message cap: the replay of its key when the seat
// stored it already, the 429 otherwise.
func (c *charge) refuseAdmission(ctx context.Context, b parley.RateBucket, wait time.Duration) (*parley.PostResult, error) {
	c.overCap = true
	now := c.s.now().UTC()
	c.s.limits.hot.mark(c.room, c.seat, now, now.Add(wait))
	if c.key != "" && checkKey(c.key) == nil {
		if orig, err := c.s.store.ByIdempotencyKey(ctx, c.room, c.seat, c.key); err == nil {
			return replay(orig), nil
		}
	}
	return nil, rateError(c.room, c.seat, c.p, b, wait)
}

// takeTokens takes the post's tokens from the seat's token bucket, once every check has
// passed, and its admission with them when it was deferred: one take of the three buckets,
// all or none. A refused admission answers rep or err with c.overCap set: that answer is the
// post's, whatever else is wrong with it.
func (c *charge) takeTokens(ctx context.Context, tokens int) (*parley.PostResult, error) {
	if tokens > c.p.SeatTokensPerMinute {
		return nil, parley.Errorf(parley.ETOOLARGE, "the message is %d tokens; a seat may post at most %d a minute", tokens, c.p.SeatTokensPerMinute).
			WithHint("split it, or send the bulk as a reference (a path, a commit) and keep the facts")
	}
	buckets := c.few[:0]
	if !c.admitted {
		buckets = append(buckets, seatMessages(c.seat, c.p), roomMessages(c.p))
	}
	if tokens > 0 {
		buckets = append(buckets, seatTokens(c.seat, tokens, c.p))
	}
	if len(buckets) == 0 {
		return nil, nil
	}
	took, err := c.s.limits.rates().TakeRate(ctx, c.room, c.s.now().UTC(), buckets)
	if err != nil {
		return nil, c.s.internal(ctx, "post: rate caps", err)
	}
	if took.OK {
		c.admitted, c.tokens = true, max(tokens, 0)
		return nil, nil
	}
	b := buckets[took.Short]
	if b.Kind != parley.RateTokens {
		return c.refuseAdmission(ctx, b, took.Wait)
	}
	// Short of tokens only: the post is refused, and settle takes its admission as for any
	// refusal (over a message cap by then, the answer becomes that 429).
	return nil, rateError(c.room, c.seat, c.p, b, took.Wait)
}

// settle gives back what the post's outcome does not keep: nothing for a stored post; the
// room's message and the tokens for a refused one; everything for a replay or a server fault.
// A post refused before its admission was taken takes it now, so that it costs what it would
// have; over the cap, its answer becomes the 429 (or the replay of its key), as admission
// first would have answered.
func (c *charge) settle(ctx context.Context, res *parley.PostResult, err error) (*parley.PostResult, error) {
	if c == nil || (err == nil && res != nil && !res.Replay) {
		return res, err
	}
	// The client may have gone; what it took goes back, and a refusal counts, all the same.
	gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if !c.admitted {
		if err == nil || c.overCap || parley.ErrorCode(err) == parley.EINTERNAL {
			return res, err // a replay, a fault or a 429: nothing was taken, nothing to take
		}
		if rep, aerr := c.admitNow(gctx); rep != nil || aerr != nil {
			return rep, aerr
		}
		if c.repeated {
			c.s.addStat(ctx, c.room, c.seat, "dedup_tokens", int64(c.repeatTokens))
			c.s.addStat(ctx, c.room, c.seat, "dedup_messages", 1)
		}
	}
	var back []parley.RateBucket
	if (res != nil && res.Replay) || parley.ErrorCode(err) == parley.EINTERNAL {
		back = append(back, seatMessages(c.seat, c.p))
	}
	back = append(back, roomMessages(c.p))
	if c.tokens > 0 {
		back = append(back, seatTokens(c.seat, c.tokens, c.p))
	}
	if gerr := c.s.limits.rates().GiveRate(gctx, c.room, c.s.now().UTC(), back); gerr != nil {
		c.s.log.WarnContext(ctx, "room: giving back a refused post's rate allowance", "room", c.room, "seat", c.seat, "err", gerr)
	}
	return res, err
}

// hotSeats remembers, for the seats of this process's posts refused at admission, until when
// their bucket (or their room's) lacked a message. It only decides when admission is taken,
// never what a post is answered, so a hint that is wrong (a give-back, another process's
// refills) costs a round trip at most.
type hotSeats struct {
	mu    sync.Mutex
	until map[rateKey]time.Time // by room and seat
}

// maxHot bounds the hints kept; past it the expired ones go, then all.
const maxHot = 4096

func (h *hotSeats) is(room, seat string, now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.until) == 0 {
		return false
	}
	k := rateKey{room: room, seat: seat}
	t, ok := h.until[k]
	if ok && !now.Before(t) {
		delete(h.until, k)
		return false
	}
	return ok
}

func (h *hotSeats) mark(room, seat string, now, until time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.until == nil {
		h.until = map[rateKey]time.Time{}
	}
	if len(h.until) >= maxHot {
		for k, t := range h.until {
			if !now.Before(t) {
				delete(h.until, k)
			}
		}
		if len(h.until) >= maxHot {
			clear(h.until)
		}
	}
	k := rateKey{room: room, seat: seat}
	if until.After(h.until[k]) {
		h.until[k] = until
	}
}

func (h *hotSeats) forget(room string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for k := range h.until {
		if k.room == room {
			delete(h.until, k)
		}
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
