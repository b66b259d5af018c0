package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/parleyhq/parley"
)

// posterAppend is an append by seat that names the seat as it was authenticated (Poster).
func posterAppend(room string, poster *parley.Seat, body string) *parley.Append {
	return &parley.Append{Message: msg(room, poster.Name, body), Poster: poster}
}

// wantRefused checks that err is the store's refusal of a poster, with a message that says why.
func wantRefused(t testing.TB, what string, err error, why string) {
	t.Helper()
	wantCode(t, what, err, parley.EFORBIDDEN)
	if !strings.Contains(err.Error(), why) {
		t.Fatalf("%s: %v, want it to say %q", what, err, why)
	}
}

// testPoster: an append that names its poster (Append.Poster) is stored only while the room
// holds that seat unrevoked with that token, and a refused one takes no seq.
func testPoster(t *testing.T, s parley.Store) {
	MustCreateRoom(t, s, "limiter")
	alice := MustCreateSeat(t, s, "limiter", "alice")
	bob := MustCreateSeat(t, s, "limiter", "bob")
	if m := MustAppend(t, s, posterAppend("limiter", alice, "v1 note load to all n=1\nfirst")); m.Seq != 1 {
		t.Fatalf("first post: seq %d, want 1", m.Seq)
	}
	// A seat named without a token is checked for revocation only.
	MustAppend(t, s, posterAppend("limiter", &parley.Seat{Room: "limiter", Name: "bob"}, "v1 note load to all n=1\nno token"))

	if err := s.RevokeSeat(ctx(t), "limiter", "bob", t0); err != nil {
		t.Fatal(err)
	}
	_, err := s.Append(ctx(t), posterAppend("limiter", bob, "v1 note load to all n=1\nafter revoke"))
	wantRefused(t, "a revoked seat's append", err, "seat bob was revoked")

	old := *alice
	if err := s.SetSeatToken(ctx(t), "limiter", "alice", tokenHash("limiter", "alice2")); err != nil {
		t.Fatal(err)
	}
	_, err = s.Append(ctx(t), posterAppend("limiter", &old, "v1 note load to all n=1\nold token"))
	wantRefused(t, "an append with a rotated token", err, "the token of seat alice was rotated")
	fresh := old
	fresh.TokenHash = tokenHash("limiter", "alice2")
	MustAppend(t, s, posterAppend("limiter", &fresh, "v1 note load to all n=1\nnew token"))

	_, err = s.Append(ctx(t), posterAppend("limiter", &parley.Seat{Room: "limiter", Name: "ghost"}, "v1 note load to all n=1\nghost"))
	wantRefused(t, "an append by a seat the room lacks", err, "seat ghost does not sit in room limiter")
	// A seat of the same name in another room is another seat.
	MustCreateRoom(t, s, "other")
	MustCreateSeat(t, s, "other", "alice")
	elsewhere := &parley.Seat{Room: "other", Name: "alice", TokenHash: tokenHash("other", "alice")}
	_, err = s.Append(ctx(t), posterAppend("limiter", elsewhere, "v1 note load to all n=1\nelsewhere"))
	wantRefused(t, "an append to one room by another room's seat", err, "seat alice does not sit in room limiter")

	// Refused and stored appends racing, so that a store that batches them decides both
	// kinds in one batch: only the good ones take seqs, and those stay gapless.
	const each = 20
	var wg sync.WaitGroup
	var mu sync.Mutex
	var seqs []int64
	for w, p := range []*parley.Seat{&fresh, bob, &old, &fresh} {
		wg.Go(func() {
			for i := range each {
				res, err := s.Append(context.Background(), posterAppend("limiter", p, fmt.Sprintf("v1 note load to all n=1\nw%d p%d", w, i)))
				good := p == &fresh
				switch {
				case good && err != nil:
					t.Errorf("worker %d: %v", w, err)
				case !good && parley.ErrorCode(err) != parley.EFORBIDDEN:
					t.Errorf("worker %d (%s): %v, want %s", w, p.Name, err, parley.EFORBIDDEN)
				case good:
					mu.Lock()
					seqs = append(seqs, res.Seq)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	for i := range seqs {
		seqs[i] -= 3 // the three stored above
	}
	checkGapless(t, seqs, 2*each)
	wantLastSeq(t, s, "limiter", 3+2*each)
}

// testSharedPoster: a revocation or rotation through one store refuses, at once, an append
// through the other that names the seat as it was before.
func testSharedPoster(t *testing.T, open OpenPair) {
	a, b := open(t)
	MustCreateRoom(t, a, "limiter")
	alice := MustCreateSeat(t, a, "limiter", "alice")
	bob := MustCreateSeat(t, a, "limiter", "bob")
	MustAppend(t, b, posterAppend("limiter", alice, "v1 note load to all n=1\nbefore"))
	MustAppend(t, b, posterAppend("limiter", bob, "v1 note load to all n=1\nbefore"))

	if err := a.RevokeSeat(ctx(t), "limiter", "bob", t0); err != nil {
		t.Fatal(err)
	}
	_, err := b.Append(ctx(t), posterAppend("limiter", bob, "v1 note load to all n=1\nafter"))
	wantRefused(t, "an append through the other store after a revocation", err, "seat bob was revoked")

	if err := a.SetSeatToken(ctx(t), "limiter", "alice", tokenHash("limiter", "alice2")); err != nil {
		t.Fatal(err)
	}
	_, err = b.Append(ctx(t), posterAppend("limiter", alice, "v1 note load to all n=1\nafter"))
	wantRefused(t, "an append through the other store after a rotation", err, "the token of seat alice was rotated")
	wantLastSeq(t, a, "limiter", 2)
}
