package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/storetest"
)

// TestDedupMemoryAgrees posts a random history (few bodies, so repeats are common; times out
// of order; some messages without a hash) through a Sole store whose dedup memory is made tiny,
// so that it overflows, forgets seats and meets older messages it cannot date. Before each
// post it asks Duplicate, with a random window and count, and compares the answer with the
// dedup query run on the database (the answer without the memory); the post must then be
// refused as a repeat of exactly that message, or stored. Bursts of concurrent posts make the
// committer answer within batches too.
func TestDedupMemoryAgrees(t *testing.T) {
	defer func(keep, mx, scan int) { dedupKeep, dedupMax, seatOlderScan = keep, mx, scan }(dedupKeep, dedupMax, seatOlderScan)
	dedupKeep, dedupMax, seatOlderScan = 10, 24, 8

	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"), Sole())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	storetest.MustCreateRoom(t, s, "r")
	rng := rand.New(rand.NewPCG(17, 3))
	base := time.Date(2026, 9, 19, 12, 0, 0, 0, time.UTC)
	seats := []string{"a", "b", "c", "d"}
	var bodies []string
	for i := range 30 {
		bodies = append(bodies, fmt.Sprintf("body %d", i))
	}
	pick := func() (seat string, m *parley.Message, since time.Time, n int) {
		seat = seats[rng.IntN(len(seats))]
		body := bodies[rng.IntN(len(bodies))]
		var hash []byte
		if rng.IntN(10) > 0 {
			hash = []byte(body)
		}
		m = &parley.Message{Room: "r", Seat: seat, Time: base.Add(time.Duration(rng.IntN(100)-50) * time.Second),
			Format: parley.FormatText, Body: body, Hash: hash}
		if rng.IntN(3) > 0 {
			since = base.Add(time.Duration(rng.IntN(100)-50) * time.Second)
		}
		n = []int{0, 1, 3, 5, 7, 20}[rng.IntN(6)]
		return seat, m, since, n
	}
	memoryAnswered, repeats := 0, 0
	for i := range 400 {
		if i%50 == 49 {
			// A burst: the committer batches these, each checked against the ones before it.
			var wg sync.WaitGroup
			for range 12 {
				_, m, since, n := pick()
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := s.Append(ctx, &parley.Append{Message: m, DedupSince: since, DedupLast: n})
					if err != nil && parley.ErrorCode(err) != parley.ECONFLICT {
						t.Errorf("burst append: %v", err)
					}
				}()
			}
			wg.Wait()
		}
		seat, m, since, n := pick()
		want, err := duplicate(ctx, s.r, "r", seat, m.Hash, since, n, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want != 0 {
			repeats++
		}
		if len(m.Hash) > 0 && s.dedup.surelyNone("r", seat, m.Hash, since, n) {
			memoryAnswered++
		}
		got, err := s.Duplicate(ctx, "r", seat, m.Hash, since, n)
		if err != nil || got != want {
			t.Fatalf("post %d: Duplicate(%s, %q, since %v, last %d) = %d, %v; the query says %d", i, seat, m.Body, since, n, got, err, want)
		}
		res, err := s.Append(ctx, &parley.Append{Message: m, DedupSince: since, DedupLast: n})
		switch {
		case want == 0 && err != nil:
			t.Fatalf("post %d: %v; the query found no repeat", i, err)
		case want != 0 && (parley.ErrorCode(err) != parley.ECONFLICT || seqOf(err) != want):
			t.Fatalf("post %d: stored as #%d (%v); the query found a repeat of #%d", i, res.Seq, err, want)
		}
	}
	// Both answers must be common, or the test proves little.
	if memoryAnswered < 50 || repeats < 40 {
		t.Fatalf("the memory answered %d of 400 questions alone; %d were repeats", memoryAnswered, repeats)
	}
	t.Logf("the memory answered %d of 400 questions alone; %d were repeats", memoryAnswered, repeats)
}

func seqOf(err error) int64 {
	pe, ok := err.(*parley.Error)
	if !ok {
		return 0
	}
	v, _ := pe.Fields["seq"].(int64)
	return v
}

// TestDedupMemoryOff: without Sole (another Store may write the file) the memory stays empty
// and every answer is the query's.
func TestDedupMemoryOff(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	other, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	storetest.MustCreateRoom(t, s, "r")
	for i := range 3 {
		body := fmt.Sprintf("m%d", i)
		storetest.MustAppend(t, s, &parley.Append{Message: &parley.Message{Room: "r", Seat: "a", Time: time.Now(), Format: parley.FormatText, Body: body, Hash: []byte(body)}})
	}
	// The other Store writes a message this one never saw; dedup must still find it.
	storetest.MustAppend(t, other, &parley.Append{Message: &parley.Message{Room: "r", Seat: "a", Time: time.Now(), Format: parley.FormatText, Body: "x", Hash: []byte("x")}})
	_, err = s.Append(t.Context(), &parley.Append{Message: &parley.Message{Room: "r", Seat: "a", Time: time.Now(), Format: parley.FormatText, Body: "x", Hash: []byte("x")}, DedupLast: 10})
	if parley.ErrorCode(err) != parley.ECONFLICT || seqOf(err) != 4 {
		t.Fatalf("append of a repeat of the other store's #4: %v", err)
	}
	if len(s.dedup.seats) != 0 {
		t.Fatalf("the memory holds %d seats without Sole", len(s.dedup.seats))
	}
}
