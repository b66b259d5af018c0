package postgres

import (
	"slices"
	"sync"
	"time"
)

// roomBatches queues work per room and drains each room's queue on a goroutine of its own,
// batch after batch: a batch is what is waiting when the last one ends (at most max), so a lone
// op runs at once and a busy room's ops share one round trip. The group commit (group.go), the
// rate takes (rates.go) and the lookups (lookups.go) each keep one.
//
// A drained queue's goroutine waits a moment (drainIdle) for more before it ends. A busy room
// goes idle between batches all the time, and a goroutine started for each batch began on a
// small stack and grew it, copying it, in pgx's deep calls: a few percent of the server's CPU.
type roomBatches[T any] struct {
	mu     sync.Mutex
	queues map[string]*roomQueue[T]
	// A batch smaller than max waits up to hold for more ops while holdFor(room) tells that
	// some are on their way (the commit wait of the appends, commitwait.go); set before use.
	hold    time.Duration
	holdFor func(room string) bool
}

// roomQueue holds the ops waiting for one room. running tells whether a goroutine drains them;
// idle, that it waits on wake for more.
type roomQueue[T any] struct {
	pending []T
	running bool
	idle    bool
	wake    chan struct{} // one slot: add's signal to an idle goroutine
}

// drainIdle is how long a room's goroutine waits for more ops once its queue is empty.
const drainIdle = 250 * time.Millisecond

// add queues op for room and, when no goroutine drains the room's queue, starts one that hands
// run every batch until the queue stays empty for drainIdle; an idle one is woken.
func (b *roomBatches[T]) add(room string, op T, max int, run func(room string, batch []T)) {
	b.mu.Lock()
	if b.queues == nil {
		b.queues = map[string]*roomQueue[T]{}
	}
	q := b.queues[room]
	if q == nil {
		q = &roomQueue[T]{wake: make(chan struct{}, 1)}
		b.queues[room] = q
	}
	q.pending = append(q.pending, op)
	switch {
	case !q.running:
		q.running = true
		go b.drain(room, q, max, run)
	case q.idle:
		q.idle = false
		select {
		case q.wake <- struct{}{}:
		default: // a signal is already waiting
		}
	}
	b.mu.Unlock()
}

// take removes up to n of the ops waiting for room and returns them, oldest first: for the
// batch running on the room's goroutine, to take in ops queued since it began.
func (b *roomBatches[T]) take(room string, n int) []T {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.queues[room]
	if q == nil || n <= 0 || len(q.pending) == 0 {
		return nil
	}
	n = min(n, len(q.pending))
	out := slices.Clone(q.pending[:n])
	q.pending = q.pending[n:]
	return out
}

func (b *roomBatches[T]) drain(room string, q *roomQueue[T], max int, run func(room string, batch []T)) {
	var timer *time.Timer
	held := false // the batch about to run has had its wait
	for {
		b.mu.Lock()
		n := min(len(q.pending), max)
		if n == 0 {
			q.idle = true
			b.mu.Unlock()
			if timer == nil {
				timer = time.NewTimer(drainIdle)
			} else {
				timer.Reset(drainIdle)
			}
			select {
			case <-q.wake:
				timer.Stop()
				continue
			case <-timer.C:
			}
			b.mu.Lock()
			if len(q.pending) == 0 {
				// Still idle: add starts a new goroutine for the room's next op.
				q.running, q.idle = false, false
				delete(b.queues, room)
				b.mu.Unlock()
				return
			}
			b.mu.Unlock()
			continue
		}
		if !held && n < max && b.hold > 0 && b.holdFor != nil {
			held = true
			b.mu.Unlock()
			b.waitFor(room, q, max)
			continue
		}
		held = false
		batch := q.pending[:n:n]
		q.pending = q.pending[n:]
		b.mu.Unlock()
		run(room, batch)
	}
}

// waitFor holds the room's next batch while ops are announced on their way to it (holdFor),
// up to b.hold, or until max are queued; each op queued meanwhile wakes it (add). It returns
// at once when none is announced.
func (b *roomBatches[T]) waitFor(room string, q *roomQueue[T], max int) {
	if !b.holdFor(room) {
		return
	}
	t := time.NewTimer(b.hold)
	defer t.Stop()
	defer func() {
		b.mu.Lock()
		q.idle = false
		b.mu.Unlock()
	}()
	for {
		b.mu.Lock()
		full := len(q.pending) >= max
		q.idle = !full // so that add wakes this goroutine
		b.mu.Unlock()
		if full || !b.holdFor(room) {
			return
		}
		select {
		case <-q.wake:
		case <-t.C:
			return
		}
	}
}
