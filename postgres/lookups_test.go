package postgres

import (
	"context"
	"crypto/sha256"
	"errors"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/pgtest"
)

func tokenHash(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// lookupFixture is a store with rooms r and q: in r seats a (active) and b (revoked), in q
// seat c; runs r/ok, r/bad and q/other.
func lookupFixture(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.Context(), pgtest.DSN(t))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := t.Context()
	now := time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range []string{"r", "q"} {
		must(s.CreateRoom(ctx, &parley.Room{Name: r, Policy: parley.DefaultPolicy(), CreatedAt: now}))
	}
	for _, st := range []struct{ room, name string }{{"r", "a"}, {"r", "b"}, {"q", "c"}} {
		must(s.CreateSeat(ctx, &parley.Seat{Room: st.room, Name: st.name, Role: parley.RoleAgent, TokenHash: tokenHash(st.name), CreatedAt: now}))
	}
	must(s.RevokeSeat(ctx, "r", "b", now.Add(time.Minute)))
	must(s.CreateRun(ctx, &parley.Run{Room: "r", ID: "ok", Passed: 3, Seat: "a", Time: now}))
	must(s.CreateRun(ctx, &parley.Run{Room: "r", ID: "bad", Passed: 1, Failed: 2, Seat: "a", Time: now}))
	must(s.CreateRun(ctx, &parley.Run{Room: "q", ID: "other", Passed: 5, Seat: "c", Time: now}))
	return s
}

// sameAnswer fails unless a lookup answered (got, err) as the reference did (want, werr): the
// same value, or the same error code and message.
func sameAnswer(t *testing.T, what string, got any, err error, want any, werr error) {
	t.Helper()
	if (err == nil) != (werr == nil) || (err != nil && (parley.ErrorCode(err) != parley.ErrorCode(werr) || err.Error() != werr.Error())) {
		t.Errorf("%s: error %v, want %v", what, err, werr)
		return
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Errorf("%s: %+v, want %+v", what, got, want)
	}
}

// TestLookupBatch runs batches of token and run lookups, with a key asked twice, keys that
// match nothing, a run id of another room and a caller that left, and checks every answer
// against the reference, a statement per lookup (sqlstore.Tables, which the store used before).
func TestLookupBatch(t *testing.T) {
	s := lookupFixture(t)
	ctx := t.Context()
	gone, cancel := context.WithCancel(ctx)
	cancel()

	keys := []string{"a", "b", "nobody", "a", "c", "c"}
	ops := make([]*lookupOp, len(keys))
	for i, k := range keys {
		ops[i] = &lookupOp{ctx: ctx, key: string(tokenHash(k)), done: make(chan struct{})}
	}
	ops[4].ctx = gone
	s.runLookups("", ops)
	for i, o := range ops {
		select {
		case <-o.done:
		default:
			t.Fatalf("token lookup %d (%s) not answered", i, keys[i])
		}
		if i == 4 {
			if !errors.Is(o.err, context.Canceled) {
				t.Errorf("a lookup whose caller left: %v, want context.Canceled", o.err)
			}
			continue
		}
		// A miss is a nil seat, which SeatByToken answers with the reference's ENOTFOUND.
		want, werr := s.Tables.SeatByToken(ctx, tokenHash(keys[i]))
		if o.err != nil || (o.seat == nil) != (parley.ErrorCode(werr) == parley.ENOTFOUND) || (o.seat != nil && !reflect.DeepEqual(o.seat, want)) {
			t.Errorf("token %s: %+v, %v; want %+v, %v", keys[i], o.seat, o.err, want, werr)
		}
	}

	ids := []string{"ok", "missing", "other", "ok", "bad"}
	rops := make([]*lookupOp, len(ids))
	for i, id := range ids {
		rops[i] = &lookupOp{ctx: ctx, run: true, room: "r", key: id, done: make(chan struct{})}
	}
	s.runLookups("", rops)
	for i, o := range rops {
		want, werr := s.Tables.Run(ctx, "r", ids[i])
		if o.err != nil {
			t.Errorf("run %s: %v", ids[i], o.err)
			continue
		}
		if (o.found == nil) != (werr != nil) || (o.found != nil && !reflect.DeepEqual(o.found, want)) {
			t.Errorf("run %s: %+v, want %+v, %v", ids[i], o.found, want, werr)
		}
	}
}

// TestLookupBatchMixed runs one batch of token lookups and run lookups of three rooms, one of
// which PostgreSQL refuses (a room name with a NUL byte, which text cannot hold): the refused
// statement's lookups get its error, and every other lookup, before it or after it in the round
// trip, gets the reference's answer.
func TestLookupBatchMixed(t *testing.T) {
	s := lookupFixture(t)
	ctx := t.Context()
	type ask struct {
		run       bool
		room, key string
	}
	asks := []ask{{false, "", "a"}, {true, "r", "ok"}, {true, "bad\x00room", "ok"}, {false, "", "nobody"},
		{true, "q", "other"}, {true, "r", "bad"}, {true, "q", "ok"}, {false, "", "c"}}
	ops := make([]*lookupOp, len(asks))
	for i, a := range asks {
		key := a.key
		if !a.run {
			key = string(tokenHash(a.key))
		}
		ops[i] = &lookupOp{ctx: ctx, run: a.run, room: a.room, key: key, done: make(chan struct{})}
	}
	s.runLookups("", ops)
	for i, o := range ops {
		a := asks[i]
		select {
		case <-o.done:
		default:
			t.Fatalf("lookup %d (%+v) not answered", i, a)
		}
		switch {
		case a.room == "bad\x00room":
			if o.err == nil {
				t.Errorf("run in a room PostgreSQL cannot name: %+v, want its error", o.found)
			}
		case a.run:
			want, werr := s.Tables.Run(ctx, a.room, a.key)
			if o.err != nil || (o.found == nil) != (werr != nil) || (o.found != nil && !reflect.DeepEqual(o.found, want)) {
				t.Errorf("run %s/%s: %+v, %v; want %+v, %v", a.room, a.key, o.found, o.err, want, werr)
			}
		default:
			want, werr := s.Tables.SeatByToken(ctx, tokenHash(a.key))
			if o.err != nil || (o.seat == nil) != (werr != nil) || (o.seat != nil && !reflect.DeepEqual(o.seat, want)) {
				t.Errorf("token %s: %+v, %v; want %+v, %v", a.key, o.seat, o.err, want, werr)
			}
		}
	}
}

// TestLookupsConcurrent looks tokens and runs up from many goroutines at once through
// SeatByToken and Run, so that they meet in batches, and checks each answer against the
// reference; then revokes a seat and adds a run, and checks that the very next lookups see
// both.
func TestLookupsConcurrent(t *testing.T) {
	s := lookupFixture(t)
	ctx := t.Context()
	tokens := []string{"a", "b", "c", "nobody"}
	runs := []struct{ room, id string }{{"r", "ok"}, {"r", "bad"}, {"r", "other"}, {"q", "other"}, {"q", "ok"}, {"r", "none"}}
	type ref struct {
		v   any
		err error
	}
	wantTok := map[string]ref{}
	for _, k := range tokens {
		st, err := s.Tables.SeatByToken(ctx, tokenHash(k))
		wantTok[k] = ref{st, err}
	}
	wantRun := map[string]ref{}
	for _, r := range runs {
		run, err := s.Tables.Run(ctx, r.room, r.id)
		wantRun[r.room+"/"+r.id] = ref{run, err}
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 17))
			for range 40 {
				if rng.IntN(2) == 0 {
					k := tokens[rng.IntN(len(tokens))]
					st, err := s.SeatByToken(ctx, tokenHash(k))
					sameAnswer(t, "token "+k, st, err, wantTok[k].v, wantTok[k].err)
				} else {
					r := runs[rng.IntN(len(runs))]
					run, err := s.Run(ctx, r.room, r.id)
					w := wantRun[r.room+"/"+r.id]
					sameAnswer(t, "run "+r.room+"/"+r.id, run, err, w.v, w.err)
				}
			}
		})
	}
	wg.Wait()

	// A revocation and a run, committed: the next lookups see them, with no wait.
	if err := s.RevokeSeat(ctx, "r", "a", time.Now()); err != nil {
		t.Fatal(err)
	}
	if st, err := s.SeatByToken(ctx, tokenHash("a")); err != nil || st.RevokedAt == nil {
		t.Errorf("the token of a seat just revoked: %+v, %v; want the seat, revoked", st, err)
	}
	if err := s.CreateRun(ctx, &parley.Run{Room: "r", ID: "none", Passed: 1, Seat: "a", Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if run, err := s.Run(ctx, "r", "none"); err != nil || run.Passed != 1 {
		t.Errorf("a run just stored: %+v, %v", run, err)
	}
	// A caller that has left gets its context's error, not a wait.
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.SeatByToken(gone, tokenHash("c")); !errors.Is(err, context.Canceled) {
		t.Errorf("a lookup for a caller that left: %v", err)
	}
}

// TestAddStats writes counters in batches to room r and one AddStat at a time to room q, the
// same deltas, and compares the two rooms' counters; a batch naming a room that does not
// exist writes nothing.
func TestAddStats(t *testing.T) {
	s := lookupFixture(t)
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(3, 9))
	seats, keys := []string{"a", "b", ""}, []string{"messages", "tokens_posted", "dedup_messages"}
	for range 5 {
		var deltas []parley.StatDelta
		for _, seat := range seats {
			for _, key := range keys {
				if rng.IntN(2) == 0 {
					d := int64(rng.IntN(50) - 5)
					deltas = append(deltas, parley.StatDelta{Room: "r", Seat: seat, Key: key, Delta: d})
					if err := s.AddStat(ctx, "q", seat, key, d); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		rng.Shuffle(len(deltas), func(i, j int) { deltas[i], deltas[j] = deltas[j], deltas[i] })
		if err := s.AddStats(ctx, deltas); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Stats(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	want, err := s.Stats(ctx, "q")
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 || !reflect.DeepEqual(got, want) {
		t.Errorf("batched counters %v, one at a time %v", got, want)
	}
	err = s.AddStats(ctx, []parley.StatDelta{{Room: "r", Seat: "a", Key: "messages", Delta: 1000}, {Room: "nowhere", Seat: "a", Key: "messages", Delta: 1}})
	if parley.ErrorCode(err) != parley.ENOTFOUND {
		t.Errorf("a batch with a room that does not exist: %v, want ENOTFOUND", err)
	}
	if after, _ := s.Stats(ctx, "r"); !reflect.DeepEqual(after, got) {
		t.Errorf("a refused batch changed the counters: %v, was %v", after, got)
	}
}
