package postgres

import (
	"context"
	"fmt"
	"sync"

	"github.com/parleyhq/parley"
)

// Group commit. An append locks its room's row (rooms.last_seq) until it commits, and the
// commit waits for the WAL to be flushed: appends to one room ran one after the other, each
// holding the lock through its own flush. Instead, the appends of this process to one room
// that are waiting at the same moment run in one transaction, each inside its own savepoint,
// and commit with one flush. An append that fails is rolled back to its savepoint alone, seq
// included, and gets its own error; the others commit. Nothing returns before its commit, so
// the guarantee is the one of a transaction per append; only the lock and the flush are
// shared. Appends of other processes wait for the room's lock as before.
//
// A batch takes the appends already waiting; it never waits for more, so a lone append is
// committed at once.

// maxBatch bounds one transaction. It also keeps a transaction within the 64
// subtransactions that PostgreSQL caches per backend; beyond them every other session's
// snapshot checks get slower.
const maxBatch = 64

// groupOp is one append waiting for its room's batch.
type groupOp struct {
	ctx  context.Context
	a    *parley.Append
	m    parley.Message
	out  parley.Appended
	err  error
	done chan struct{}
}

// roomQueue holds the appends waiting for one room; running tells whether a goroutine is
// committing them.
type roomQueue struct {
	pending []*groupOp
	running bool
}

type groups struct {
	mu     sync.Mutex
	queues map[string]*roomQueue
}

// group runs one append in its room's next batch and waits for it. Once queued an append
// always runs or fails with its context's error, before its batch commits.
func (s *Store) group(ctx context.Context, a *parley.Append, m parley.Message) (parley.Appended, error) {
	if err := ctx.Err(); err != nil {
		return parley.Appended{}, err
	}
	o := &groupOp{ctx: ctx, a: a, m: m, done: make(chan struct{})}
	s.groups.mu.Lock()
	if s.groups.queues == nil {
		s.groups.queues = map[string]*roomQueue{}
	}
	q := s.groups.queues[m.Room]
	if q == nil {
		q = &roomQueue{}
		s.groups.queues[m.Room] = q
	}
	q.pending = append(q.pending, o)
	if !q.running {
		q.running = true
		go s.runRoom(m.Room, q)
	}
	s.groups.mu.Unlock()
	<-o.done
	return o.out, o.err
}

// runRoom commits the room's waiting appends, batch after batch, until none are left.
func (s *Store) runRoom(room string, q *roomQueue) {
	for {
		s.groups.mu.Lock()
		n := min(len(q.pending), maxBatch)
		if n == 0 {
			q.running = false
			delete(s.groups.queues, room)
			s.groups.mu.Unlock()
			return
		}
		batch := q.pending[:n:n]
		q.pending = q.pending[n:]
		s.groups.mu.Unlock()
		s.commitBatch(batch)
	}
}

func (s *Store) commitBatch(batch []*groupOp) {
	ctx := context.Background()
	var ok []*groupOp // appends that ran without error and wait for the commit
	defer func() {
		for _, o := range batch {
			close(o.done)
		}
	}()
	// When the transaction fails as a whole, every answer computed in it fails with it: a
	// replay or a duplicate found there may name a sibling's message that was never stored.
	fail := func(err error) {
		for _, o := range batch {
			o.out, o.err = parley.Appended{}, err
		}
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		fail(fmt.Errorf("append: %w", err))
		return
	}
	defer tx.Rollback(context.Background())
	for _, o := range batch {
		if err := o.ctx.Err(); err != nil {
			o.err = err
			continue
		}
		// appendTx opens the savepoint "op" in its first round trip. Savepoints of earlier
		// appends are not released: a release costs a round trip and frees nothing that
		// matters (their subtransactions stay part of the transaction either way), and
		// ROLLBACK TO names the latest.
		out, err := appendTx(context.WithoutCancel(o.ctx), tx, o.a, o.m)
		o.out, o.err = out, err
		if err != nil || out.Replay {
			// A replay took a seq too, before it found the original: it goes back.
			if _, rerr := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT op`); rerr != nil {
				// The savepoint may never have been made (a lost connection): the batch
				// fails as one.
				if err == nil {
					fail(fmt.Errorf("append: after a replay: rollback to savepoint: %w", rerr))
				} else {
					fail(fmt.Errorf("append: after %w: rollback to savepoint: %w", err, rerr)) // both: a full disk stays recognisable
				}
				return
			}
			continue
		}
		ok = append(ok, o)
	}
	if len(ok) == 0 {
		return
	}
	if err := tx.Commit(ctx); err != nil {
		fail(fmt.Errorf("append: commit: %w", err))
		return
	}
	for _, o := range ok {
		// This process's watchers need not wait for the notification.
		s.watch.Publish(o.out.Room, o.out.Seq)
	}
}
