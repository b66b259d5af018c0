package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/parleyhq/parley"
)

// waitSeat receives from ch until it sees want, failing on a closed channel or a timeout.
// A zero SeatChange ("check every seat") also satisfies it: it covers every change.
func waitSeat(t testing.TB, ch <-chan parley.SeatChange, want parley.SeatChange) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case got, ok := <-ch:
			if !ok {
				t.Fatalf("seat watch closed, waiting for %+v", want)
			}
			if got == want || got == (parley.SeatChange{}) {
				return
			}
		case <-timeout:
			t.Fatalf("seat watch: no %+v within 10s", want)
		}
	}
}

// testWatchSeats checks that a revocation and a rotation each reach WatchSeats, that a
// failed one (no such seat) sends nothing, and that the channel closes with its context.
func testWatchSeats(t *testing.T, s parley.Store) {
	MustCreateRoom(t, s, "limiter")
	MustCreateSeat(t, s, "limiter", "alice")
	MustCreateSeat(t, s, "limiter", "bob")
	wctx, cancel := context.WithCancel(ctx(t))
	ch := s.WatchSeats(wctx)

	if err := s.SetSeatToken(ctx(t), "limiter", "alice", tokenHash("limiter", "alice2")); err != nil {
		t.Fatalf("SetSeatToken: %v", err)
	}
	waitSeat(t, ch, parley.SeatChange{Room: "limiter", Seat: "alice"})
	if err := s.RevokeSeat(ctx(t), "limiter", "bob", t0); err != nil {
		t.Fatalf("RevokeSeat: %v", err)
	}
	waitSeat(t, ch, parley.SeatChange{Room: "limiter", Seat: "bob"})

	wantCode(t, "RevokeSeat(nosuch)", s.RevokeSeat(ctx(t), "limiter", "nosuch", t0), parley.ENOTFOUND)
	wantCode(t, "SetSeatToken(nosuch)", s.SetSeatToken(ctx(t), "limiter", "nosuch", tokenHash("limiter", "x")), parley.ENOTFOUND)
	select {
	case got := <-ch:
		t.Fatalf("seat watch sent %+v for a seat that does not exist", got)
	case <-time.After(200 * time.Millisecond):
	}

	cancel()
	select {
	case _, ok := <-ch:
		for ok {
			_, ok = <-ch
		}
	case <-time.After(10 * time.Second):
		t.Fatal("seat watch not closed after its context ended")
	}
	if err := s.RevokeSeat(ctx(t), "limiter", "alice", t0); err != nil { // must not panic
		t.Fatalf("RevokeSeat after cancel: %v", err)
	}
}

// testSharedWatchSeats checks that a revocation or rotation through one store reaches the
// WatchSeats of the other, as it must for a revoked token's streams on another server.
func testSharedWatchSeats(t *testing.T, open OpenPair) {
	a, b := open(t)
	MustCreateRoom(t, a, "limiter")
	MustCreateSeat(t, a, "limiter", "alice")
	MustCreateSeat(t, a, "limiter", "bob")
	onA := a.WatchSeats(t.Context())
	onB := b.WatchSeats(t.Context())
	if err := b.RevokeSeat(ctx(t), "limiter", "alice", t0); err != nil {
		t.Fatalf("RevokeSeat: %v", err)
	}
	waitSeat(t, onA, parley.SeatChange{Room: "limiter", Seat: "alice"})
	waitSeat(t, onB, parley.SeatChange{Room: "limiter", Seat: "alice"})
	if err := a.SetSeatToken(ctx(t), "limiter", "bob", tokenHash("limiter", "bob2")); err != nil {
		t.Fatalf("SetSeatToken: %v", err)
	}
	waitSeat(t, onB, parley.SeatChange{Room: "limiter", Seat: "bob"})
	waitSeat(t, onA, parley.SeatChange{Room: "limiter", Seat: "bob"})
}
