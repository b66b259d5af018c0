// Package fanout wakes a store's watchers: it fans each room's new last seq out to the
// channels that Store.Watch returned. Both stores, sqlite and postgres, use it.
package fanout

import (
	"context"
	"sync"
)

// Hub fans a room's new last seq out to the channels that Watch returned. A watcher's channel
// holds one value; a send replaces an unread value instead of blocking, and a value is only
// sent when it is higher than the last one sent, so a reader never sees the seq go back.
type Hub struct {
	mu     sync.Mutex // guards rooms, closed, and every send and close on a watcher channel
	rooms  map[string]map[*watcher]struct{}
	closed bool
}

type watcher struct {
	ch   chan int64
	last int64
}

func New() *Hub { return &Hub{rooms: map[string]map[*watcher]struct{}{}} }

// Subscribe returns a channel that receives the room's new seqs until ctx ends or the Hub
// closes.
func (h *Hub) Subscribe(ctx context.Context, room string) <-chan int64 {
	w := &watcher{ch: make(chan int64, 1)}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		close(w.ch)
		return w.ch
	}
	ws := h.rooms[room]
	if ws == nil {
		ws = map[*watcher]struct{}{}
		h.rooms[room] = ws
	}
	ws[w] = struct{}{}
	context.AfterFunc(ctx, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if _, ok := h.rooms[room][w]; !ok {
			return // Close got there first
		}
		delete(h.rooms[room], w)
		if len(h.rooms[room]) == 0 {
			delete(h.rooms, room)
		}
		close(w.ch)
	})
	return w.ch
}

// Publish tells the room's watchers that its last seq is now seq.
func (h *Hub) Publish(room string, seq int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for w := range h.rooms[room] {
		if seq <= w.last {
			continue
		}
		w.last = seq
		select {
		case w.ch <- seq:
		default:
			// The reader has not taken the previous value: replace it with the newer one.
			select {
			case <-w.ch:
			default:
			}
			w.ch <- seq
		}
	}
}

// Watched returns the rooms that have watchers.
func (h *Hub) Watched() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	rooms := make([]string, 0, len(h.rooms))
	for room := range h.rooms {
		rooms = append(rooms, room)
	}
	return rooms
}

// Close closes every watcher channel; later subscriptions get a closed channel.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for _, ws := range h.rooms {
		for w := range ws {
			close(w.ch)
		}
	}
	h.rooms = map[string]map[*watcher]struct{}{}
}
