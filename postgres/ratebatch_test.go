package postgres

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/pgtest"
)

// TestRateBatchAsIfAlone runs a long, mixed sequence of takes twice on one database: in room
// "b" as batches of parley_take_rates, in room "a" one at a time through parley_take_rate,
// the function each take called before batches. Every answer and, after each batch, every
// bucket's level and time must be the same: a batch answers each take as if it had run alone
// after the ones before it. The sequence has buckets seen for the first time, refusals (of the
// first bucket and of a later one), refills, tokens, a clock behind and takes that repeat a
// bucket within one batch.
func TestRateBatchAsIfAlone(t *testing.T) {
	s, err := Open(t.Context(), pgtest.DSN(t))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	ctx := t.Context()
	for _, room := range []string{"a", "b"} {
		if _, err := s.pool.Exec(ctx, `INSERT INTO rooms (name, policy, created_at) VALUES ($1, '{}', now())`, room); err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(17, 4))
	seats := []string{"s1", "s2", "s3", "s4"}
	now := time.Date(2026, 12, 2, 2, 0, 0, 0, time.UTC)
	took, refused := 0, 0
	for batch := range 60 {
		size := 1 + rng.IntN(12)
		nows := make([]time.Time, size)
		takes := make([][]parley.RateBucket, size)
		for i := range size {
			// Mostly forward, now and then a clock behind the buckets' time.
			switch r := rng.IntN(10); {
			case r < 6:
				now = now.Add(time.Duration(rng.IntN(1200)) * time.Millisecond)
			case r == 6 && batch > 5:
				nows[i] = now.Add(-time.Duration(1+rng.IntN(5000)) * time.Millisecond)
			}
			if nows[i].IsZero() {
				nows[i] = now
			}
			seat := seats[rng.IntN(len(seats))]
			if batch < 3 {
				seat = seats[rng.IntN(2)] // s3 and s4 first appear in later batches
			}
			sm := parley.RateBucket{Seat: seat, Kind: parley.RateMessages, N: 1, Rate: 0.5, Burst: 4}
			rm := parley.RateBucket{Kind: parley.RateMessages, N: 1, Rate: 2, Burst: 9}
			if rng.IntN(3) == 0 {
				takes[i] = []parley.RateBucket{{Seat: seat, Kind: parley.RateTokens, N: float64(1 + rng.IntN(300)), Rate: 10, Burst: 600}}
			} else {
				takes[i] = []parley.RateBucket{sm, rm}
			}
		}
		var want []parley.RateTake
		for i := range takes {
			r, err := s.takeRateAlone(ctx, "a", nows[i], takes[i])
			if err != nil {
				t.Fatalf("batch %d take %d alone: %v", batch, i, err)
			}
			want = append(want, r)
		}
		ops := make([]*rateOp, size)
		for i := range ops {
			ops[i] = &rateOp{ctx: ctx, now: nows[i], buckets: takes[i]}
		}
		s.takeBatch(ctx, "b", ops)
		for i, o := range ops {
			if o.err != nil {
				t.Fatalf("batch %d take %d: %v", batch, i, o.err)
			}
			if o.out != want[i] {
				t.Fatalf("batch %d take %d %+v at %v: batched %+v, alone %+v", batch, i, takes[i], nows[i], o.out, want[i])
			}
			if o.out.OK {
				took++
			} else {
				refused++
			}
		}
		if a, b := bucketRows(t, s, "a"), bucketRows(t, s, "b"); a != b {
			t.Fatalf("after batch %d the buckets differ:\nalone:   %s\nbatched: %s", batch, a, b)
		}
	}
	t.Logf("%d takes granted, %d refused", took, refused)
	if took < 50 || refused < 50 {
		t.Fatalf("the sequence took %d and refused %d: it should do plenty of both", took, refused)
	}
}

func bucketRows(t *testing.T, s *Store, room string) string {
	t.Helper()
	rows, err := s.pool.Query(t.Context(), `SELECT seat, kind, level, at FROM rate_buckets WHERE room = $1 ORDER BY seat, kind`, room)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := ""
	for rows.Next() {
		var seat, kind string
		var level float64
		var at time.Time
		if err := rows.Scan(&seat, &kind, &level, &at); err != nil {
			t.Fatal(err)
		}
		out += fmt.Sprintf("%s/%s=%v@%s ", seat, kind, level, at.UTC().Format(time.RFC3339Nano))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRateBatchesConcurrent has many goroutines take through TakeRate at once, so that their
// takes meet in batches, on two stores of one database: together they grant each seat its
// burst and the room its burst, exactly, and no call deadlocks.
func TestRateBatchesConcurrent(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, err := Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := a.pool.Exec(t.Context(), `INSERT INTO rooms (name, policy, created_at) VALUES ('r', '{}', now())`); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	room := parley.RateBucket{Kind: parley.RateMessages, N: 1, Rate: 1e-6, Burst: 150}
	var mu sync.Mutex
	granted := map[string]int{}
	tokens := map[string]float64{}
	var wg sync.WaitGroup
	for w := range 16 {
		s := a
		if w%2 == 1 {
			s = b
		}
		seat := fmt.Sprintf("s%d", w%8) // two goroutines per seat, one on each store
		wg.Go(func() {
			for range 20 {
				r, err := s.TakeRate(context.Background(), "r", now, []parley.RateBucket{
					{Seat: seat, Kind: parley.RateMessages, N: 1, Rate: 1e-6, Burst: 30}, room})
				if err != nil {
					t.Errorf("take: %v", err)
					return
				}
				if !r.OK {
					continue
				}
				r, err = s.TakeRate(context.Background(), "r", now, []parley.RateBucket{
					{Seat: seat, Kind: parley.RateTokens, N: 7, Rate: 1e-6, Burst: 100}})
				if err != nil {
					t.Errorf("take tokens: %v", err)
					return
				}
				mu.Lock()
				granted[seat]++
				if r.OK {
					tokens[seat] += 7
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	total := 0
	for seat, n := range granted {
		total += n
		if n > 30 {
			t.Errorf("seat %s got %d messages, more than its burst of 30", seat, n)
		}
		// Each message granted is followed by a take of 7 tokens: 14 of them fit in 100.
		if want := float64(7 * min(n, 14)); tokens[seat] != want {
			t.Errorf("seat %s got %v tokens for %d messages, want %v", seat, tokens[seat], n, want)
		}
	}
	if total != 150 {
		t.Errorf("granted %d messages in all (%v), want the room's burst of 150", total, granted)
	}
}
