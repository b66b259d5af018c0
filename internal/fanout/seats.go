package fanout

import (
	"context"
	"sync"

	"github.com/parleyhq/parley"
)

// seatBuffer is how many seat changes a watcher may leave unread before they collapse into
// one "check every seat" (the zero SeatChange).
const seatBuffer = 64

// Seats fans seat changes (revocations, rotations) out to the channels WatchSeats returned.
// Unlike appends, a seat change cannot be summed up by a later one, so each is kept; a
// watcher that falls seatBuffer behind gets the zero SeatChange instead of the ones it missed,
// which tells it to check every seat.
type Seats struct {
	mu       sync.Mutex // guards watchers, closed, and every send and close on a watcher channel
	watchers map[chan parley.SeatChange]struct{}
	closed   bool
}

func NewSeats() *Seats { return &Seats{watchers: map[chan parley.SeatChange]struct{}{}} }

// Subscribe returns a channel that receives every seat change until ctx ends or the hub
// closes.
func (h *Seats) Subscribe(ctx context.Context) <-chan parley.SeatChange {
	ch := make(chan parley.SeatChange, seatBuffer)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		close(ch)
		return ch
	}
	h.watchers[ch] = struct{}{}
	context.AfterFunc(ctx, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if _, ok := h.watchers[ch]; !ok {
			return // Close got there first
		}
		delete(h.watchers, ch)
		close(ch)
	})
	return ch
}

// Publish tells every watcher about c; the zero SeatChange says "check every seat".
func (h *Seats) Publish(c parley.SeatChange) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.watchers {
		select {
		case ch <- c:
		default:
			// The reader is seatBuffer behind: replace what it has not read with one
			// "check every seat", which covers those changes and this one.
			for len(ch) > 0 {
				select {
				case <-ch:
				default:
				}
			}
			ch <- parley.SeatChange{}
		}
	}
}

// Close closes every watcher channel; later subscriptions get a closed channel.
func (h *Seats) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for ch := range h.watchers {
		close(ch)
	}
	h.watchers = map[chan parley.SeatChange]struct{}{}
}
