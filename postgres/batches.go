package postgres

import "sync"

// roomBatches queues work per room and drains each room's queue on a goroutine of its own,
// batch after batch: a batch is what is waiting when the last one ends (at most max), so a lone
// op runs at once and a busy room's ops share one round trip. The group commit (group.go) and
// the rate takes (rates.go) each keep one.
type roomBatches[T any] struct {
	mu     sync.Mutex
	queues map[string]*roomQueue[T]
}

// roomQueue holds the ops waiting for one room; running tells whether a goroutine drains them.
type roomQueue[T any] struct {
	pending []T
	running bool
}

// add queues op for room and, when no goroutine drains the room's queue, starts one that hands
// run every batch until the queue is empty.
func (b *roomBatches[T]) add(room string, op T, max int, run func(room string, batch []T)) {
	b.mu.Lock()
	if b.queues == nil {
		b.queues = map[string]*roomQueue[T]{}
	}
	q := b.queues[room]
	if q == nil {
		q = &roomQueue[T]{}
		b.queues[room] = q
	}
	q.pending = append(q.pending, op)
	if !q.running {
		q.running = true
		go b.drain(room, q, max, run)
	}
	b.mu.Unlock()
}

func (b *roomBatches[T]) drain(room string, q *roomQueue[T], max int, run func(room string, batch []T)) {
	for {
		b.mu.Lock()
		n := min(len(q.pending), max)
		if n == 0 {
			q.running = false
			delete(b.queues, room)
			b.mu.Unlock()
			return
		}
		batch := q.pending[:n:n]
		q.pending = q.pending[n:]
		b.mu.Unlock()
		run(room, batch)
	}
}
