package postgres

import (
	"errors"
	"math"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parleyhq/parley"
)

// A post's tokens are taken in its append's transaction (parley.AppendRateStore): the batch
// locks the token buckets its appends name, after the room's row (round trip 1), decides each
// take in Go, in the batch's order, as it decides the appends, and writes every bucket it took
// from back with the messages (round trip 2). So a take costs no statement, round trip or
// transaction of its own, and is undone with the append whenever the append is. The
// arithmetic is parley_take_rate's (migration 0005): the same refill, the same wait.
//
// Lock order: an append locks its room's row, then these buckets, by rateKeyOrder. Nothing
// that locks a bucket waits for a room's row, so no cycle can form.

var _ parley.AppendRateStore = (*Store)(nil)

// TakesInAppend implements parley.AppendRateStore.
func (s *Store) TakesInAppend() {}

// qTakeInsert makes the buckets that do not exist yet, full at their first take's time.
const qTakeInsert = `INSERT INTO rate_buckets (room, seat, kind, level, at)
	SELECT $1, u.seat, u.kind, u.burst, u.at FROM unnest($2::text[], $3::text[], $4::float8[], $5::timestamptz[]) AS u(seat, kind, burst, at)
	ON CONFLICT DO NOTHING`

// qTakeLock locks and reads the buckets, in the order given.
const qTakeLock = `SELECT b.level, b.at
	FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS u(seat, kind, i)
	JOIN rate_buckets b ON b.room = $1 AND b.seat = u.seat AND b.kind = u.kind
	ORDER BY u.i
	FOR UPDATE OF b`

// qTakeUpdate writes back the buckets taken from.
const qTakeUpdate = `UPDATE rate_buckets b SET level = u.level, at = u.at
	FROM unnest($2::text[], $3::text[], $4::float8[], $5::timestamptz[]) AS u(seat, kind, level, at)
	WHERE b.room = $1 AND b.seat = u.seat AND b.kind = u.kind`

// batchTakes is what one attempt of a batch knows of the buckets its appends take from.
type batchTakes struct {
	keys   []rateKey
	first  map[rateKey]parley.RateBucket // the first take of each, for a bucket to be made
	firstT map[rateKey]time.Time
	level  map[rateKey]float64
	at     map[rateKey]time.Time
	dirty  map[rateKey]bool
}

func appendTakes(ops []*groupOp) *batchTakes {
	t := &batchTakes{}
	for _, o := range ops {
		b := o.a.Take
		if b == nil {
			continue
		}
		if t.first == nil {
			t.first, t.firstT = map[rateKey]parley.RateBucket{}, map[rateKey]time.Time{}
		}
		k := rateKey{b.Seat, b.Kind}
		if _, ok := t.first[k]; !ok {
			t.first[k], t.firstT[k] = *b, micro(o.a.TakeAt)
			t.keys = append(t.keys, k)
		}
	}
	slices.SortFunc(t.keys, rateKeyOrder)
	return t
}

// micro is t as the database keeps it.
func micro(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

func (t *batchTakes) insertArgs(room string) []any {
	seats, kinds := t.names()
	bursts := make([]float64, len(t.keys))
	ats := make([]time.Time, len(t.keys))
	for i, k := range t.keys {
		bursts[i], ats[i] = t.first[k].Burst, t.firstT[k]
	}
	return []any{room, seats, kinds, bursts, ats}
}

func (t *batchTakes) lockArgs(room string) []any {
	seats, kinds := t.names()
	return []any{room, seats, kinds}
}

func (t *batchTakes) names() (seats, kinds []string) {
	seats, kinds = make([]string, len(t.keys)), make([]string, len(t.keys))
	for i, k := range t.keys {
		seats[i], kinds[i] = k.seat, k.kind
	}
	return seats, kinds
}

// read takes qTakeLock's rows.
func (t *batchTakes) read(br pgx.BatchResults) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	t.level, t.at, t.dirty = map[rateKey]float64{}, map[rateKey]time.Time{}, map[rateKey]bool{}
	n := 0
	for rows.Next() {
		if n >= len(t.keys) {
			return errTakeRows
		}
		var level float64
		var at time.Time
		if err := rows.Scan(&level, &at); err != nil {
			return err
		}
		t.level[t.keys[n]], t.at[t.keys[n]] = level, at.UTC()
		n++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if n != len(t.keys) {
		return errTakeRows
	}
	return nil
}

var errTakeRows = errors.New("a rate bucket went missing under its lock")

// take takes b at now, or says how long until the bucket would hold it, taking nothing.
func (t *batchTakes) take(b *parley.RateBucket, now time.Time) (wait time.Duration, ok bool) {
	k := rateKey{b.Seat, b.Kind}
	now = micro(now)
	cur := t.level[k]
	if d := now.Sub(t.at[k]); d > 0 { // a clock behind the bucket's refills nothing
		cur += b.Rate * d.Seconds()
	}
	cur = min(cur, b.Burst)
	if cur < b.N-1e-9 {
		w := time.Duration(math.Min((b.N-cur)/b.Rate, 1e6) * float64(time.Second))
		return max(w, time.Microsecond), false
	}
	t.level[k] = max(0, cur-b.N)
	if now.After(t.at[k]) {
		t.at[k] = now
	}
	t.dirty[k] = true
	return 0, true
}

// updateArgs are qTakeUpdate's arguments, or nil when nothing was taken.
func (t *batchTakes) updateArgs(room string) []any {
	var seats, kinds []string
	var levels []float64
	var ats []time.Time
	for _, k := range t.keys {
		if t.dirty[k] {
			seats, kinds = append(seats, k.seat), append(kinds, k.kind)
			levels, ats = append(levels, t.level[k]), append(ats, t.at[k])
		}
	}
	if seats == nil {
		return nil
	}
	return []any{room, seats, kinds, levels, ats}
}
