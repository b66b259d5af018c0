package postgres

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/parleyhq/parley"
)

// The rate caps' buckets live in the rate_buckets table (migration 0002), so that every
// process on the database shares them. A batch of takes or a give-back is one call of a
// function that locks the rows it needs, in one order (rateKeyOrder), for that statement only;
// it runs beside the append, not in its transaction, and commits without waiting for any WAL
// flush (the table is unlogged, 0005: losing it in a crash grants a burst more, harmless).

var _ parley.RateStore = (*Store)(nil)

// The statements of the rate caps: a batch of takes (migration 0006), one take and one
// give-back (0005).
const (
	qTakeRates = `SELECT short, wait FROM parley_take_rates($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`
	qTakeRate  = `SELECT short, wait FROM parley_take_rate($1, $2, $3, $4, $5, $6, $7)`
	qGiveRate  = `SELECT parley_give_rate($1, $2, $3, $4, $5, $6, $7)`
)

// rateArgs spreads buckets over the functions' parallel arrays.
func rateArgs(room string, now time.Time, buckets []parley.RateBucket) []any {
	seats := make([]string, len(buckets))
	kinds := make([]string, len(buckets))
	n := make([]float64, len(buckets))
	rate := make([]float64, len(buckets))
	burst := make([]float64, len(buckets))
	for i, b := range buckets {
		seats[i], kinds[i], n[i], rate[i], burst[i] = b.Seat, b.Kind, b.N, b.Rate, b.Burst
	}
	return []any{room, now, seats, kinds, n, rate, burst}
}

// TakeRate implements parley.RateStore. The takes of one room that are waiting at the same
// moment run in one call of parley_take_rates (migration 0006), each all or none and answered as
// if it had run alone after the ones before it; see takeBatch.
func (s *Store) TakeRate(ctx context.Context, room string, now time.Time, buckets []parley.RateBucket) (parley.RateTake, error) {
	if len(buckets) == 0 {
		return parley.RateTake{OK: true}, nil
	}
	if err := ctx.Err(); err != nil {
		return parley.RateTake{}, err
	}
	o := &rateOp{ctx: ctx, now: now, buckets: buckets, done: make(chan struct{})}
	s.rates.add(room, o, maxRateBatch, s.runRates)
	select {
	case <-o.done:
		return o.out, o.err
	case <-ctx.Done():
		// The batch may still take it, as a query cancelled too late would have.
		return parley.RateTake{}, ctx.Err()
	}
}

// Rate batches. Every post of a room takes from the room's own bucket, so on PostgreSQL each
// take would lock that one row, in a transaction and a round trip of its own, while the room's
// other posts wait for it: with many seats posting, the takes queue on the row. Instead the
// takes of one room waiting in this process at the same moment form one batch, one call that
// locks each bucket it needs once, runs the takes one after the other in memory, and writes each
// bucket back once. A batch takes the takes already waiting and never waits for more, so a lone
// take runs at once. The cap stays exact across processes: every take is decided under the
// rows' locks, in the database.

// maxRateBatch bounds one call.
const maxRateBatch = 64

// rateOp is one take waiting for its room's batch.
type rateOp struct {
	ctx     context.Context
	now     time.Time
	buckets []parley.RateBucket
	out     parley.RateTake
	err     error
	done    chan struct{}
}

// runRates answers one batch of the room's waiting takes.
func (s *Store) runRates(room string, batch []*rateOp) {
	live := batch[:0:0]
	for _, o := range batch {
		if err := o.ctx.Err(); err != nil {
			o.err = err
			continue
		}
		live = append(live, o)
	}
	if len(live) == 1 {
		// Alone, a take costs less through parley_take_rate, which answers it the
		// same and locks its buckets in the same order (TestRateBatchAsIfAlone).
		o := live[0]
		o.out, o.err = s.takeRateAlone(context.Background(), room, o.now, o.buckets)
	} else {
		s.takeBatch(context.Background(), room, live)
	}
	for _, o := range batch {
		close(o.done)
	}
}

// rateKeyOrder is the order in which every call locks bucket rows: the seats' message buckets,
// the room's message bucket, the seats' token buckets (each by seat), then anything else by kind
// and seat. parley_take_rate and parley_give_rate are called with buckets in this order.
func rateKeyOrder(a, b rateKey) int {
	if ra, rb := a.rank(), b.rank(); ra != rb {
		return ra - rb
	}
	if a.kind != b.kind {
		return strings.Compare(a.kind, b.kind)
	}
	return strings.Compare(a.seat, b.seat)
}

type rateKey struct{ seat, kind string }

func (k rateKey) rank() int {
	switch {
	case k.kind == parley.RateMessages && k.seat != "":
		return 0
	case k.kind == parley.RateMessages:
		return 1
	case k.kind == parley.RateTokens && k.seat != "":
		return 2
	}
	return 3
}

// takeBatch runs ops, the takes of one room, in one call of parley_take_rates, in their order,
// and sets each op's answer or error.
func (s *Store) takeBatch(ctx context.Context, room string, ops []*rateOp) {
	if len(ops) == 0 {
		return
	}
	// Each key's first use: how a bucket seen for the first time starts.
	type firstUse struct {
		burst float64
		at    time.Time
	}
	var keys []rateKey
	use := map[rateKey]firstUse{}
	for _, o := range ops {
		for _, b := range o.buckets {
			k := rateKey{b.Seat, b.Kind}
			if _, ok := use[k]; !ok {
				use[k] = firstUse{b.Burst, o.now}
				keys = append(keys, k)
			}
		}
	}
	slices.SortFunc(keys, rateKeyOrder)
	index := make(map[rateKey]int, len(keys))
	seats := make([]string, len(keys))
	kinds := make([]string, len(keys))
	bursts0 := make([]float64, len(keys))
	ats0 := make([]time.Time, len(keys))
	for i, k := range keys {
		index[k] = i + 1 // 1-based, as SQL arrays
		seats[i], kinds[i], bursts0[i], ats0[i] = k.seat, k.kind, use[k].burst, use[k].at
	}
	nows := make([]time.Time, len(ops))
	first := make([]int32, 0, len(ops)+1)
	var key []int32
	var n, rate, burst []float64
	for i, o := range ops {
		nows[i] = o.now
		first = append(first, int32(len(key)+1))
		for _, b := range o.buckets {
			key = append(key, int32(index[rateKey{b.Seat, b.Kind}]))
			n, rate, burst = append(n, b.N), append(rate, b.Rate), append(burst, b.Burst)
		}
	}
	first = append(first, int32(len(key)+1))
	var short []int32
	var wait []float64
	err := s.pool.QueryRow(ctx, qTakeRates,
		room, seats, kinds, bursts0, ats0, nows, first, key, n, rate, burst).Scan(&short, &wait)
	if err == nil && (len(short) != len(ops) || len(wait) != len(ops)) {
		err = fmt.Errorf("%d answers for %d takes", len(short), len(ops))
	}
	if err != nil {
		if sqlState(err) == foreignKeyViolation {
			err = roomNotFound(room)
		} else {
			err = fmt.Errorf("take rate: %w", err)
		}
		for _, o := range ops {
			o.err = err
		}
		return
	}
	for i, o := range ops {
		o.out, o.err = rateAnswer(int(short[i]), wait[i], len(o.buckets))
	}
}

// rateAnswer is the RateTake for a take of n buckets that the database answered with short and
// wait.
func rateAnswer(short int, wait float64, n int) (parley.RateTake, error) {
	if short < 0 {
		return parley.RateTake{OK: true}, nil
	}
	if short >= n || math.IsNaN(wait) {
		return parley.RateTake{}, fmt.Errorf("take rate: bucket %d of %d, wait %v", short, n, wait)
	}
	d := time.Duration(math.Min(wait, 1e6) * float64(time.Second))
	return parley.RateTake{Short: short, Wait: max(d, time.Microsecond)}, nil
}

// takeRateAlone is one take through parley_take_rate (migration 0005): how a batch of one runs,
// and the reference the batches are tested against. The callers pass buckets in rateKeyOrder.
func (s *Store) takeRateAlone(ctx context.Context, room string, now time.Time, buckets []parley.RateBucket) (parley.RateTake, error) {
	var short int
	var wait float64
	err := s.pool.QueryRow(ctx, qTakeRate,
		rateArgs(room, now, buckets)...).Scan(&short, &wait)
	if err != nil {
		if sqlState(err) == foreignKeyViolation {
			return parley.RateTake{}, roomNotFound(room)
		}
		return parley.RateTake{}, fmt.Errorf("take rate: %w", err)
	}
	return rateAnswer(short, wait, len(buckets))
}

// GiveRate implements parley.RateStore.
func (s *Store) GiveRate(ctx context.Context, room string, now time.Time, buckets []parley.RateBucket) error {
	if len(buckets) == 0 {
		return nil
	}
	if _, err := s.pool.Exec(ctx, qGiveRate, rateArgs(room, now, buckets)...); err != nil {
		return fmt.Errorf("give rate: %w", err)
	}
	return nil
}

// qResetRates deletes the room's buckets ($1) after locking them in rateKeyOrder ($2 is
// parley.RateMessages, $3 parley.RateTokens; COLLATE "C" compares bytes, as strings.Compare
// does), the order every take locks them in. A DELETE alone locks the rows in the order it
// meets them, and deadlocked with a take that held one of them and waited for another
// (TestRateTakesWithResets): PostgreSQL then failed one of the two, the reset or the post.
const qResetRates = `DELETE FROM rate_buckets b USING (
		SELECT seat, kind FROM rate_buckets WHERE room = $1
		ORDER BY CASE WHEN kind = $2 AND seat <> '' THEN 0 WHEN kind = $2 THEN 1 WHEN kind = $3 AND seat <> '' THEN 2 ELSE 3 END,
			kind COLLATE "C", seat COLLATE "C"
		FOR UPDATE) l
	WHERE b.room = $1 AND b.seat = l.seat AND b.kind = l.kind`

// ResetRates implements parley.RateStore.
func (s *Store) ResetRates(ctx context.Context, room string) error {
	if _, err := s.pool.Exec(ctx, qResetRates, room, parley.RateMessages, parley.RateTokens); err != nil {
		return fmt.Errorf("reset rates: %w", err)
	}
	return nil
}
