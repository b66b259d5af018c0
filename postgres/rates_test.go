package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/pgtest"
	"github.com/parleyhq/parley/storetest"
)

func TestRates(t *testing.T) {
	storetest.RunRates(t, func(t *testing.T) parley.RateStore { return MustOpen(t, pgtest.DSN(t)) })
}

// TestRatesShared takes from one seat's bucket through two stores on one database, as two
// server processes do: together they grant the burst once, not once each.
func TestRatesShared(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, b := MustOpen(t, dsn), MustOpen(t, dsn)
	storetest.MustCreateRoom(t, a, "r")
	now := time.Now().UTC()
	seat := parley.RateBucket{Seat: "s", Kind: parley.RateMessages, N: 1, Rate: 1.0 / 60, Burst: 10}
	granted := 0
	for i := range 30 {
		s := a
		if i%2 == 1 {
			s = b
		}
		r, err := s.TakeRate(context.Background(), "r", now, []parley.RateBucket{seat})
		if err != nil {
			t.Fatal(err)
		}
		if r.OK {
			granted++
		}
	}
	if granted != 10 {
		t.Errorf("two stores granted %d takes from a bucket of 10", granted)
	}
	// A reset through one is seen by the other.
	if err := b.ResetRates(context.Background(), "r"); err != nil {
		t.Fatal(err)
	}
	if r, err := a.TakeRate(context.Background(), "r", now, []parley.RateBucket{seat}); err != nil || !r.OK {
		t.Errorf("after a reset through the other store: %+v, %v", r, err)
	}
}

// BenchmarkTakeRate is the cost a post's admission adds on PostgreSQL: one round trip that
// takes from the seat's and the room's buckets.
func BenchmarkTakeRate(b *testing.B) {
	s := MustOpen(b, pgtest.DSN(b))
	storetest.MustCreateRoom(b, s, "r")
	buckets := []parley.RateBucket{
		{Seat: "s", Kind: parley.RateMessages, N: 1, Rate: 1e7, Burst: 1 << 20},
		{Kind: parley.RateMessages, N: 1, Rate: 1e8, Burst: 1 << 24},
	}
	for b.Loop() {
		if r, err := s.TakeRate(context.Background(), "r", time.Now(), buckets); err != nil || !r.OK {
			b.Fatal(r, err)
		}
	}
}
