package fanout

import (
	"context"
	"testing"

	"github.com/parleyhq/parley"
)

// A watcher that falls behind loses no change: what it missed collapses into one zero
// SeatChange ("check every seat"), and later changes follow it.
func TestSeatsOverflow(t *testing.T) {
	h := NewSeats()
	ch := h.Subscribe(t.Context())
	for i := range seatBuffer + 5 {
		h.Publish(parley.SeatChange{Room: "r", Seat: string(rune('a' + i%26))})
	}
	h.Publish(parley.SeatChange{Room: "r", Seat: "last"})
	var got []parley.SeatChange
	for len(ch) > 0 {
		got = append(got, <-ch)
	}
	if len(got) == 0 || len(got) > seatBuffer {
		t.Fatalf("%d changes buffered", len(got))
	}
	sawAll := false
	for _, c := range got {
		if c == (parley.SeatChange{}) {
			sawAll = true
		}
	}
	if !sawAll || got[len(got)-1] != (parley.SeatChange{Room: "r", Seat: "last"}) {
		t.Fatalf("after an overflow: %v, want a zero change and then r/last", got)
	}
}

// Close and a cancelled context close the channel; a late subscriber gets a closed one.
func TestSeatsClose(t *testing.T) {
	h := NewSeats()
	ctx, cancel := context.WithCancel(t.Context())
	a := h.Subscribe(ctx)
	b := h.Subscribe(t.Context())
	cancel()
	if _, ok := <-a; ok {
		t.Fatal("a change after the context ended")
	}
	h.Close()
	if _, ok := <-b; ok {
		t.Fatal("a change after Close")
	}
	if _, ok := <-h.Subscribe(t.Context()); ok {
		t.Fatal("a subscription after Close is open")
	}
	h.Publish(parley.SeatChange{Room: "r", Seat: "x"}) // must not panic
}
