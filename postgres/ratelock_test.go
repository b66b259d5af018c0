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
// own while the take runs, through each rate function (the held ones and the ones they fall
// back to), once both buckets exist: the take must
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
	both := []parley.RateBucket{first, second}
	batch := func(q string) func(context.Context) error {
		return func(ctx context.Context) error {
			ops := []*rateOp{{now: time.Now(), buckets: both}, {now: time.Now(), buckets: both}}
			s.takeBatchWith(ctx, q, "r", ops)
			for _, o := range ops {
				if o.err != nil {
					return o.err
				}
			}
			return nil
		}
	}
	takes := map[string]func(context.Context) error{
		// What the store calls once both buckets exist.
		"parley_take_rate_held": func(ctx context.Context) error {
			_, err := s.takeRateWith(ctx, qTakeRateHeld, "r", rateArgs("r", time.Now(), both), len(both))
			return err
		},
		"parley_take_rates_held": batch(qTakeRatesHeld),
		// What it falls back to when a bucket is new.
		"parley_take_rate": func(ctx context.Context) error {
			_, err := s.takeRateWith(ctx, qTakeRate, "r", rateArgs("r", time.Now(), both), len(both))
			return err
		},
		"parley_take_rates": batch(qTakeRates),
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

// TestRateHeldMissing calls the held take functions with a bucket that is not there yet, after
// one that is: each fails with bucketMissing and changes nothing, and the row it locked is free
// again when the call returns. TakeRate then takes through the function that inserts the new
// bucket, and the next take goes through the held one.
func TestRateHeldMissing(t *testing.T) {
	s, err := Open(t.Context(), pgtest.DSN(t))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	ctx := t.Context()
	if _, err := s.pool.Exec(ctx, `INSERT INTO rooms (name, policy, created_at) VALUES ('r', '{}', now())`); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 2, 14, 0, 0, 0, time.UTC)
	room := parley.RateBucket{Kind: parley.RateMessages, N: 1, Rate: 1, Burst: 10}
	if r, err := s.TakeRate(ctx, "r", now, []parley.RateBucket{room}); err != nil || !r.OK {
		t.Fatalf("first take: %+v, %v", r, err)
	}
	before := bucketRows(t, s, "r")
	if before != "/messages=9@2026-12-02T14:00:00Z " {
		t.Fatalf("after one take of a new bucket of 10: %s", before)
	}
	// The room's bucket is locked first (it exists), then the seat's tokens are missing.
	both := []parley.RateBucket{room, {Seat: "s", Kind: parley.RateTokens, N: 4, Rate: 1, Burst: 100}}
	_, err = s.takeRateWith(ctx, qTakeRateHeld, "r", rateArgs("r", now, both), len(both))
	if sqlState(err) != bucketMissing {
		t.Fatalf("held take with a new bucket: %v, want SQLSTATE %s", err, bucketMissing)
	}
	ops := []*rateOp{{now: now, buckets: both}, {now: now, buckets: both[:1]}}
	s.takeBatchWith(ctx, qTakeRatesHeld, "r", ops)
	for i, o := range ops {
		if sqlState(o.err) != bucketMissing {
			t.Fatalf("held batch with a new bucket, take %d: %v, want SQLSTATE %s", i, o.err, bucketMissing)
		}
	}
	if after := bucketRows(t, s, "r"); after != before {
		t.Fatalf("the failed held takes changed the buckets: %s, was %s", after, before)
	}
	probe, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = probe.Exec(ctx, `SELECT 1 FROM rate_buckets WHERE room = 'r' AND seat = '' FOR UPDATE NOWAIT`)
	probe.Rollback(ctx)
	if err != nil {
		t.Fatalf("the room's bucket after the failed held takes: %v; want it free", err)
	}
	// Through the store: the new bucket is made, and both are taken from.
	if r, err := s.TakeRate(ctx, "r", now, both); err != nil || !r.OK {
		t.Fatalf("take with a new bucket: %+v, %v", r, err)
	}
	if got, want := bucketRows(t, s, "r"), "/messages=8@2026-12-02T14:00:00Z s/tokens=96@2026-12-02T14:00:00Z "; got != want {
		t.Fatalf("after the take: %s, want %s", got, want)
	}
	// Both exist now: the held function answers, and refuses the seat's tokens past its level.
	big := []parley.RateBucket{room, {Seat: "s", Kind: parley.RateTokens, N: 97, Rate: 1, Burst: 100}}
	r, err := s.takeRateWith(ctx, qTakeRateHeld, "r", rateArgs("r", now, big), len(big))
	if err != nil || r.OK || r.Short != 1 || r.Wait != time.Second {
		t.Fatalf("held take of 97 tokens of 96: %+v, %v; want short 1, wait 1s", r, err)
	}
}
