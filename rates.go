package parley

import (
	"context"
	"time"
)

// Rate buckets. A room's rate caps (Policy.Seat*, Policy.Room*) are token buckets: a bucket
// holds at most Burst, refills at Rate per second, and a post takes from it. A bucket that is
// seen for the first time starts full. Refill is computed when a bucket is used, from its
// level and the time it was last written; a now earlier than that time (clocks of two
// processes that disagree) refills nothing and never moves the time back, so a skewed clock
// can delay a refill but never add to it.

// Bucket kinds.
const (
	RateMessages = "messages"
	RateTokens   = "tokens"
)

// RateBucket names one bucket of a room, how much to take from it or give back to it, and how
// it refills.
type RateBucket struct {
	Seat  string  // the seat whose bucket it is; "" for the room's own
	Kind  string  // RateMessages or RateTokens
	N     float64 // how much to take or give back
	Rate  float64 // refill per second; > 0
	Burst float64 // capacity; >= 1
}

// RateTake is the answer of RateStore.TakeRate.
type RateTake struct {
	OK    bool          // everything was taken
	Short int           // when !OK: the index of the first bucket that lacks
	Wait  time.Duration // when !OK: how long until that bucket holds its N; > 0
}

// RateStore keeps rate buckets. room/ keeps them in memory for a store that serves one
// process (SQLite); a store that several `parley serve` processes share (PostgreSQL)
// implements RateStore, so that together the processes grant a seat and a room the same
// allowance as one process would.
type RateStore interface {
	// TakeRate takes N from every bucket of room at time now, all or none. When one lacks, it
	// takes nothing and says which and how long until it would hold its N: a refused take
	// never makes the wait longer.
	TakeRate(ctx context.Context, room string, now time.Time, buckets []RateBucket) (RateTake, error)
	// GiveRate gives N back to every bucket (a post that was not stored after all), up to its
	// Burst.
	GiveRate(ctx context.Context, room string, now time.Time, buckets []RateBucket) error
	// ResetRates forgets the room's buckets, so that they start full (after a policy change).
	ResetRates(ctx context.Context, room string) error
}
