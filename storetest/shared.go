package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley"
)

// OpenPair returns two stores on one new, empty database, as two server processes would
// hold them, and arranges for both to be closed with t.Cleanup.
type OpenPair func(t *testing.T) (parley.Store, parley.Store)

// RunShared runs the checks for several stores on one database: appends through both are
// gapless, an Idempotency-Key or a repeat posted through one is caught by the other, a racing
// lapse wins once, a revocation or rotation through one refuses the other's append at once, and, when crossWatch is set, a Watch on one store is woken by an append
// through the other.
func RunShared(t *testing.T, open OpenPair, crossWatch bool) {
	t.Run("GaplessConcurrent", func(t *testing.T) { testSharedGapless(t, open) })
	t.Run("Idempotency", func(t *testing.T) { testSharedIdempotency(t, open) })
	t.Run("Dedup", func(t *testing.T) { testSharedDedup(t, open) })
	t.Run("LapseRace", func(t *testing.T) { testSharedLapseRace(t, open) })
	t.Run("Poster", func(t *testing.T) { testSharedPoster(t, open) })
	if crossWatch {
		t.Run("Watch", func(t *testing.T) { testSharedWatch(t, open) })
		t.Run("WatchSeats", func(t *testing.T) { testSharedWatchSeats(t, open) })
	}
}

func testSharedGapless(t *testing.T, open OpenPair) {
	a, b := open(t)
	MustCreateRoom(t, a, "limiter")
	const workers, each = 8, 50
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		seqs []int64
		errs []error
	)
	for w := range workers {
		s := a
		if w%2 == 1 {
			s = b
		}
		wg.Go(func() {
			for i := range each {
				m, err := s.Append(context.Background(), &parley.Append{
					Message:   msg("limiter", fmt.Sprintf("w%d", w), fmt.Sprintf("v1 note load to all n=1\nw%d p%d", w, i)),
					DedupLast: 500, DedupSince: t0.Add(-time.Hour),
				})
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					seqs = append(seqs, m.Seq)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d appends failed, first: %v", len(errs), errs[0])
	}
	checkGapless(t, seqs, workers*each)
	wantLastSeq(t, a, "limiter", workers*each)
	wantLastSeq(t, b, "limiter", workers*each)
}

// race runs f once on each store at the same moment and returns both results.
func race(a, b parley.Store, f func(s parley.Store) (parley.Appended, error)) (ms [2]parley.Appended, errs [2]error) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, s := range []parley.Store{a, b} {
		wg.Go(func() {
			<-start
			ms[i], errs[i] = f(s)
		})
	}
	close(start)
	wg.Wait()
	return ms, errs
}

func testSharedIdempotency(t *testing.T, open OpenPair) {
	a, b := open(t)
	MustCreateRoom(t, a, "limiter")
	for i := range 20 {
		key := fmt.Sprintf("retry-%d", i)
		ms, errs := race(a, b, func(s parley.Store) (parley.Appended, error) {
			m := msg("limiter", "alice", fmt.Sprintf("v1 note retried to all n=1\npost %d", i))
			m.IdempotencyKey = key
			return s.Append(context.Background(), &parley.Append{Message: m})
		})
		replays := 0
		for j := range 2 {
			switch {
			case errs[j] != nil:
				t.Fatalf("key %s: append %d: %v", key, j, errs[j])
			case ms[j].Replay:
				replays++
			}
		}
		if replays != 1 || ms[0].Seq != ms[1].Seq || ms[0].Seq != int64(i+1) {
			t.Fatalf("key %s: seqs %d, %d with %d replays; want one post (seq %d) and one replay of it",
				key, ms[0].Seq, ms[1].Seq, replays, i+1)
		}
	}
	wantLastSeq(t, b, "limiter", 20)
}

func testSharedDedup(t *testing.T, open OpenPair) {
	a, b := open(t)
	MustCreateRoom(t, a, "limiter")
	for i := range 20 {
		body := fmt.Sprintf("v1 note repeated to all n=1\nsame %d", i)
		ms, errs := race(a, b, func(s parley.Store) (parley.Appended, error) {
			return s.Append(context.Background(), &parley.Append{Message: msg("limiter", "alice", body), DedupLast: 500})
		})
		ok, dup := -1, -1
		for j := range 2 {
			switch {
			case errs[j] == nil:
				ok = j
			case parley.ErrorCode(errs[j]) == parley.ECONFLICT:
				dup = j
			default:
				t.Fatalf("post %d: append %d: %v", i, j, errs[j])
			}
		}
		if ok < 0 || dup < 0 {
			t.Fatalf("post %d: errors %v, %v; want one accepted and one refused as a repeat", i, errs[0], errs[1])
		}
		wantDuplicate(t, errs[dup], ms[ok].Seq)
	}
	wantLastSeq(t, b, "limiter", 20)
}

func testSharedLapseRace(t *testing.T, open OpenPair) {
	a, b := open(t)
	MustCreateRoom(t, a, "limiter")
	for i := range 10 {
		m := MustAppend(t, a, &parley.Append{
			Message: msg("limiter", "alice", fmt.Sprintf("v1 request x to bob n=1\nask %d", i)),
			Asks:    []*parley.Ask{{Line: 2, To: "bob", Text: "size?", Due: ptr(t0)}},
		})
		ask := &parley.Ask{Room: "limiter", Seq: m.Seq, Line: 2}
		ms, errs := race(a, b, func(s parley.Store) (parley.Appended, error) {
			lapse := &parley.Message{Room: "limiter", Seat: parley.SystemSeat, Time: t0, Format: parley.FormatConvention,
				Body: fmt.Sprintf("v1 note x to alice,bob re %d n=1\nreason no answer", m.Seq)}
			return s.Append(context.Background(), &parley.Append{Message: lapse, Lapses: ask})
		})
		won := -1
		for j := range 2 {
			if errs[j] == nil {
				won = j
			} else {
				wantCode(t, "losing lapse", errs[j], parley.ECONFLICT)
			}
		}
		if won < 0 || errs[1-won] == nil {
			t.Fatalf("lapse %d: errors %v, %v; want exactly one lapse", i, errs[0], errs[1])
		}
		asks, err := b.Asks(context.Background(), "limiter", parley.AskLapsed)
		if err != nil || len(asks) != i+1 || asks[i].ClosedBy != ms[won].Seq {
			t.Fatalf("lapsed asks = %s, %v; want %d, the last closed by #%d", dumpAsks(asks), err, i+1, ms[won].Seq)
		}
	}
	wantLastSeq(t, a, "limiter", 20)
}

func testSharedWatch(t *testing.T, open OpenPair) {
	a, b := open(t)
	MustCreateRoom(t, a, "limiter")
	onA := a.Watch(t.Context(), "limiter")
	onB := b.Watch(t.Context(), "limiter")
	post(t, b, "limiter", "alice", "v1 note from b to all n=0")
	waitFor(t, onA, 1)
	waitFor(t, onB, 1)
	post(t, a, "limiter", "bob", "v1 note from a to all n=0")
	waitFor(t, onB, 2)
	waitFor(t, onA, 2)
}
