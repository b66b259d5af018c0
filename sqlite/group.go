package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
)

// Group commit. With synchronous=FULL every commit waits for an fsync of the WAL, a few
// milliseconds on most disks, so one transaction per post caps a server at a few hundred
// posts a second however many cores it has. Instead, writes that must be durable before
// they return (Append, AddStat) are handed to one committer goroutine, which runs every
// write waiting at that moment in one transaction, each inside its own savepoint, and
// commits them with one fsync. A write that fails is rolled back to its savepoint alone and
// gets its own error; the others commit. Nothing returns before its commit is durable, so
// the guarantee is the one of a transaction per write; only the fsyncs are shared.
//
// A batch takes the writes whose callers are already waiting; it never waits for more, so a
// lone write is committed at once.

// The savepoint around each write of a batch, prepared with the statements of Append.
const (
	qSavepoint  = "SAVEPOINT op"
	qRollbackTo = "ROLLBACK TO op"
	qRelease    = "RELEASE op"
)

// maxBatch bounds one transaction, so a burst cannot make one commit arbitrarily late.
const maxBatch = 256

// errClosed is returned by writes submitted after Close.
var errClosed = errors.New("sqlite: store closed")

// txOp is one write for the committer.
type txOp struct {
	ctx  context.Context
	run  func(ctx context.Context, t txStmts) error
	err  error
	done chan struct{}
}

// startCommitter starts the committer; Close stops it.
func (s *Store) startCommitter() {
	s.ops = make(chan *txOp)
	s.quit = make(chan struct{})
	s.committerDone = make(chan struct{})
	go s.committer()
}

// stopCommitter waits for the batch in progress and stops the committer.
func (s *Store) stopCommitter() {
	if s.quit == nil {
		return
	}
	close(s.quit)
	<-s.committerDone
}

// inTx runs fn in a transaction shared with other writes and returns fn's error, or the
// commit's. It returns only when fn's writes are durable or rolled back. ctx is checked
// before fn runs; once fn runs it is not cancelled, since interrupting a statement would
// roll back the whole shared transaction.
func (s *Store) inTx(ctx context.Context, fn func(ctx context.Context, t txStmts) error) error {
	o := &txOp{ctx: ctx, run: fn, done: make(chan struct{})}
	// ops is unbuffered: a write is either taken by the committer, which then always
	// answers it, or never enqueued at all.
	select {
	case s.ops <- o:
	case <-ctx.Done():
		return ctx.Err()
	case <-s.quit:
		return errClosed
	}
	<-o.done
	return o.err
}

func (s *Store) committer() {
	defer close(s.committerDone)
	for {
		var batch []*txOp
		select {
		case o := <-s.ops:
			batch = append(batch, o)
		default:
			// Nothing waiting: the moment to checkpoint (checkpoint.go).
			s.checkpointIfDue()
			select {
			case o := <-s.ops:
				batch = append(batch, o)
			case <-s.quit:
				return
			}
		}
	fill:
		for len(batch) < maxBatch {
			select {
			case o := <-s.ops:
				batch = append(batch, o)
			default:
				break fill
			}
		}
		s.commitBatch(batch)
	}
}

func (s *Store) commitBatch(batch []*txOp) {
	defer func() {
		for _, o := range batch {
			close(o.done)
		}
	}()
	ctx := context.Background()
	// When the transaction fails as a whole, every answer computed in it fails with it: a
	// replay or a duplicate found there may name a sibling's message that was never stored.
	fail := func(err error) {
		for _, o := range batch {
			o.err = err
		}
	}
	conn, err := s.write.Conn(ctx)
	if err != nil {
		fail(fmt.Errorf("begin: %w", err))
		return
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		rc, ok := dc.(rawConn)
		if !ok {
			return fmt.Errorf("sqlite: the driver's connection is a %T", dc)
		}
		s.raw.forConn(dc)
		// One rawTx serves every batch (only the committer uses it), its buffers kept.
		rt := &s.rtx
		rt.ctx, rt.conn, rt.stmts = ctx, rc, &s.raw
		rt.b.reset()
		s.runBatch(rt, batch, fail)
		return nil
	})
	if err != nil {
		fail(fmt.Errorf("begin: %w", err))
	}
}

// runBatch runs the batch in one transaction on the committer's connection.
func (s *Store) runBatch(rt *rawTx, batch []*txOp, fail func(error)) {
	var ok []*txOp // writes that ran without error and wait for the commit
	tx, err := rt.conn.BeginTx(rt.ctx, driver.TxOptions{})
	if err != nil {
		fail(fmt.Errorf("begin: %w", err))
		return
	}
	t := txStmts{rt}
	for _, o := range batch {
		if err := o.ctx.Err(); err != nil {
			o.err = err
			continue
		}
		if _, err := rt.exec(qSavepoint); err != nil {
			tx.Rollback()
			fail(fmt.Errorf("savepoint: %w", err))
			return
		}
		if err := o.run(context.WithoutCancel(o.ctx), t); err != nil {
			o.err = err
			// Some errors (I/O, disk full) make SQLite roll back the whole transaction;
			// then the savepoint is gone and the batch fails as one.
			if _, rerr := rt.exec(qRollbackTo); rerr != nil {
				tx.Rollback()
				fail(fmt.Errorf("after %w: rollback to savepoint: %w", err, rerr)) // both: a full disk stays recognisable
				return
			}
		} else {
			ok = append(ok, o)
		}
		// Released, not left open until the commit: every savepoint still open makes
		// SQLite keep the pages a later write changes in its statement journal, which
		// spills to a file as a batch grows (without the release, BenchmarkAppendParallel
		// spent three times the system time).
		if _, err := rt.exec(qRelease); err != nil {
			tx.Rollback()
			fail(fmt.Errorf("release savepoint: %w", err))
			return
		}
	}
	if len(ok) == 0 {
		tx.Rollback()
		return
	}
	if err := s.indexSearch(rt); err != nil {
		tx.Rollback()
		fail(err)
		return
	}
	if err := s.writeSeqs(rt); err != nil {
		tx.Rollback()
		fail(err)
		return
	}
	if err := tx.Commit(); err != nil {
		// A commit that failed (busy, I/O) may leave the transaction open on the
		// connection; end it, or the next batch could not begin.
		rt.conn.ExecContext(rt.ctx, "ROLLBACK", nil)
		fail(fmt.Errorf("commit: %w", err))
		return
	}
	// Before any write of the batch returns: its next post must be checked against it.
	s.dedupCommitted(&rt.b.dedup)
	s.seqsCommitted(&rt.b.seqs)
	s.ckptWritten += ckptPages(len(ok))
}
