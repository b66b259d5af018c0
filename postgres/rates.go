package postgres

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/parleyhq/parley"
)

// The rate caps' buckets live in the rate_buckets table (migration 0002), so that every
// process on the database shares them. A take or a give-back is one call of a function that
// locks the rows it needs, in the order given, for that statement only; it runs beside the
// append, not in its transaction, and commits without waiting for the WAL flush (losing the
// last updates in a crash grants a few posts more, which is harmless).

var _ parley.RateStore = (*Store)(nil)

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

// TakeRate implements parley.RateStore.
func (s *Store) TakeRate(ctx context.Context, room string, now time.Time, buckets []parley.RateBucket) (parley.RateTake, error) {
	if len(buckets) == 0 {
		return parley.RateTake{OK: true}, nil
	}
	var short int
	var wait float64
	err := s.pool.QueryRow(ctx, `SELECT short, wait FROM parley_take_rate($1, $2, $3, $4, $5, $6, $7)`,
		rateArgs(room, now, buckets)...).Scan(&short, &wait)
	if err != nil {
		if sqlState(err) == foreignKeyViolation {
			return parley.RateTake{}, roomNotFound(room)
		}
		return parley.RateTake{}, fmt.Errorf("take rate: %w", err)
	}
	if short < 0 {
		return parley.RateTake{OK: true}, nil
	}
	if short >= len(buckets) || math.IsNaN(wait) {
		return parley.RateTake{}, fmt.Errorf("take rate: bucket %d of %d, wait %v", short, len(buckets), wait)
	}
	d := time.Duration(math.Min(wait, 1e6) * float64(time.Second))
	return parley.RateTake{Short: short, Wait: max(d, time.Microsecond)}, nil
}

// GiveRate implements parley.RateStore.
func (s *Store) GiveRate(ctx context.Context, room string, now time.Time, buckets []parley.RateBucket) error {
	if len(buckets) == 0 {
		return nil
	}
	if _, err := s.pool.Exec(ctx, `SELECT parley_give_rate($1, $2, $3, $4, $5, $6, $7)`, rateArgs(room, now, buckets)...); err != nil {
		return fmt.Errorf("give rate: %w", err)
	}
	return nil
}

// ResetRates implements parley.RateStore.
func (s *Store) ResetRates(ctx context.Context, room string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM rate_buckets WHERE room = $1`, room); err != nil {
		return fmt.Errorf("reset rates: %w", err)
	}
	return nil
}
