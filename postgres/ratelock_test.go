package postgres

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/pgtest"
)

// TestRateLockOrder holds the lock of the second of a take's two buckets in a transaction of its
// own while the take runs, through each rate function, once both buckets exist: the take must
// hold the first bucket's row while it waits for the second, as a lock taken in the caller's
// order (rateKeyOrder) does. A take that locked them in another order would wait for the
// second holding nothing, and could deadlock with a take that follows the order.
func TestRateLockOrder(t *testing.T) {
	s, err := Open(t.Context(), pgtest.DSN(t))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	ctx := t.Context()
	if _, err := s.pool.Exec(ctx, `INSERT INTO rooms (name, policy, created_at) VALUES ('r', '{}', now())`); err != nil {
		t.Fatal(err)
	}
	first := parley.RateBucket{Seat: "s", Kind: parley.RateMessages, N: 1, Rate: 1, Burst: 100}
	second := parley.RateBucket{Kind: parley.RateMessages, N: 1, Rate: 1, Burst: 100}
	if r, err := s.TakeRate(ctx, "r", time.Now(), []parley.RateBucket{first, second}); err != nil || !r.OK {
		t.Fatalf("first take: %+v, %v", r, err)
	}
	const lock = `SELECT 1 FROM rate_buckets WHERE room = 'r' AND seat = $1 AND kind = $2 FOR UPDATE`
	takes := map[string]func(context.Context) error{
		"parley_take_rate": func(ctx context.Context) error {
			_, err := s.takeRateAlone(ctx, "r", time.Now(), []parley.RateBucket{first, second})
			return err
		},
		"parley_take_rates": func(ctx context.Context) error {
			ops := []*rateOp{
				{now: time.Now(), buckets: []parley.RateBucket{first, second}},
				{now: time.Now(), buckets: []parley.RateBucket{first, second}},
			}
			s.takeBatch(ctx, "r", ops)
			for _, o := range ops {
				if o.err != nil {
					return o.err
				}
			}
			return nil
		},
	}
	for name, take := range takes {
		t.Run(name, func(t *testing.T) {
			holder, err := s.pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Rollback(ctx)
			if _, err := holder.Exec(ctx, lock, second.Seat, second.Kind); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- take(ctx) }()
			// Wait until the take waits for a row lock.
			deadline := time.Now().Add(10 * time.Second)
			for {
				var waiting int
				if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
					WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%'||$1||'(%'`, name).Scan(&waiting); err != nil {
					t.Fatal(err)
				}
				if waiting > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the take never waited for the held bucket")
				}
				time.Sleep(5 * time.Millisecond)
			}
			probe, err := s.pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			_, err = probe.Exec(ctx, lock+` NOWAIT`, first.Seat, first.Kind)
			probe.Rollback(ctx)
			if sqlState(err) != "55P03" { // lock_not_available
				t.Errorf("the first bucket while the take waits for the second: %v; want it locked by the take", err)
			}
			holder.Rollback(ctx)
			if err := <-done; err != nil {
				t.Errorf("take: %v", err)
			}
		})
	}
}

// TestRateTakesWithResets has two stores take from one room's buckets while a third resets
// them again and again, so that takes meet buckets deleted under them and buckets used for the
// first time by the other store at once: every take and every reset succeeds. A reset that
// deleted the rows in the order it met them deadlocked with takes (qResetRates).
func TestRateTakesWithResets(t *testing.T) {
	dsn := pgtest.DSN(t)
	var stores []*Store
	for range 3 {
		s, err := Open(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores = append(stores, s)
	}
	if _, err := stores[0].pool.Exec(t.Context(), `INSERT INTO rooms (name, policy, created_at) VALUES ('r', '{}', now())`); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var resets sync.WaitGroup
	resets.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := stores[2].ResetRates(context.Background(), "r"); err != nil {
				t.Errorf("reset: %v", err)
				return
			}
			time.Sleep(time.Millisecond)
		}
	})
	var wg sync.WaitGroup
	for w := range 12 {
		s := stores[w%2]
		seat := fmt.Sprintf("s%d", w%4)
		wg.Go(func() {
			for range 40 {
				_, err := s.TakeRate(context.Background(), "r", time.Now(), []parley.RateBucket{
					{Seat: seat, Kind: parley.RateMessages, N: 1, Rate: 1, Burst: 1000},
					{Kind: parley.RateMessages, N: 1, Rate: 1, Burst: 1000},
					{Seat: seat, Kind: parley.RateTokens, N: 5, Rate: 1, Burst: 1000}})
				if err != nil {
					t.Errorf("take: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	resets.Wait()
}
