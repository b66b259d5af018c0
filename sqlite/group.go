package sqlite

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/parleyhq/parley"
)

// Group commit. With synchronous=FULL every commit waits for an fsync of the WAL, a few
// milliseconds on most disks, so one transaction per post caps a server at a few hundred
// posts a second however many cores it has. Instead, writes that must be durable before
// they return (Append, AddStat) are handed to one committer goroutine, which runs every
// write waiting at that moment in one transaction and commits them with one fsync. Nothing
// returns before its commit is durable, so the guarantee is the one of a transaction per
// write; only the fsyncs are shared.
//
// The writes of a batch run one after the other with nothing between them: no savepoint per
// write (SAVEPOINT and RELEASE, two statements per post, and the sub-journal behind them).
// A write refused before it changed anything (a repeat, a room that does not exist) leaves
// the transaction as it found it, so it just gets its error and the batch goes on. A write
// that fails after it ran a statement that writes (two asks on one line, a closed ask it
// lapses, a value SQLite refuses), or fails in a way the committer cannot read (an I/O error),
// may have left part of itself in the transaction: the whole transaction is rolled back, that
// write gets its error, and the batch runs again from BEGIN without it, every other write
// answered afresh (a sibling's answer may have depended on it: a repeat of its body). So
// every write comes out as it would alone, seqs stay gapless, and a batch of n runs at most
// n times.
//
// A batch takes the writes whose callers are already waiting. It waits for more only when it
// has been told that more are on their way (the commit wait, below); a lone write with nothing
// on its way is committed at once. Writes that reach the committer while it runs the batch's
// writes join the batch before its COMMIT (late joiners, runOnce), rather than wait for its
// fsync and then pay one of their own.
//
// The commit wait. A commit costs a fixed few hundred microseconds of CPU and an fsync however
// many writes it carries, so a post that arrives just after a commit began, and gets the next
// one to itself, costs every post behind it that much. PostgreSQL's commit_delay answers this
// with a guess (wait when enough other transactions are open); here the committer is told. The
// room service announces each post that passed authentication and is on its way to Append
// (PostsComing), and withdraws it when the post is refused or calls Append; Append keeps it
// announced until the committer takes it. While any are announced, the committer holds its
// batch for them, up to the bound (WithCommitWait): they are microseconds away. A batch of
// fewer than yieldBelow writes with none announced first yields the processor once, so that
// handlers ready to run can hand in their writes (holdFor). Nothing is returned earlier or
// later than its commit, so durability is as before; only a batch's moment of BEGIN moves, by
// at most the bound plus one turn of the scheduler.

// A batch's transaction, begun and ended through statements the committer prepared once
// (rawtx.go), as its other statements: the driver's own BeginTx and Commit compile their
// statement on every call. BEGIN IMMEDIATE takes the write lock at once, as _txlock=immediate
// makes the driver's BEGIN do.
const (
	qBegin    = "BEGIN IMMEDIATE"
	qCommit   = "COMMIT"
	qRollback = "ROLLBACK"
)

// idleAfter is how long the committer waits for a write before it does its idle work (has
// the checkpointer copy the WAL: checkpoint.go).
const idleAfter = 50 * time.Millisecond

// DefaultCommitWait is the bound of the commit wait unless WithCommitWait sets another: about
// a commit's fixed cost, well below a post's latency.
const DefaultCommitWait = 200 * time.Microsecond

// maxBatch bounds one transaction, so a burst cannot make one commit arbitrarily late.
const maxBatch = 256

// errClosed is returned by writes submitted after Close.
var errClosed = errors.New("sqlite: store closed")

// txOp is one write for the committer.
type txOp struct {
	ctx    context.Context
	coming bool // announced in Store.coming (PostsComing): the committer withdraws it
	run    func(ctx context.Context, t txStmts) error
	err    error
	done   chan struct{}
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
	return s.inTxComing(ctx, false, fn)
}

// inTxComing is inTx for a write that may be announced in s.coming (coming): the committer,
// taking it, withdraws it; a write never taken withdraws itself.
func (s *Store) inTxComing(ctx context.Context, coming bool, fn func(ctx context.Context, t txStmts) error) error {
	o := &txOp{ctx: ctx, coming: coming, run: fn, done: make(chan struct{})}
	// ops is unbuffered: a write is either taken by the committer, which then always
	// answers it, or never enqueued at all.
	var err error
	select {
	case s.ops <- o:
		<-o.done
		return o.err
	case <-ctx.Done():
		err = ctx.Err()
	case <-s.quit:
		err = errClosed
	}
	if coming {
		s.coming.Add(-1) // never taken
	}
	return err
}

// PostsComing announces (delta 1) a post on its way to Append, or withdraws (delta -1) one
// that will not call it after all, or is about to call it: Append announces itself as it
// starts. While posts are announced, the committer holds a batch for them, up to the bound of
// WithCommitWait (see the top of group.go). Every announcement must be withdrawn; the room
// service does it in a defer. The room does not matter here: one committer serves them all.
func (s *Store) PostsComing(_ string, delta int) {
	s.coming.Add(int64(delta))
}

// WithCommitWait bounds how long the committer holds a batch for posts announced on their way
// (PostsComing) before it begins the transaction: DefaultCommitWait unless set; 0 never holds
// a batch, nor yields before one (today's committer before the commit wait).
func WithCommitWait(d time.Duration) Option {
	return func(s *Store) { s.commitWait = max(d, 0) }
}

// CommitWait is the bound of the commit wait this store was opened with (WithCommitWait).
func (s *Store) CommitWait() time.Duration { return s.commitWait }

// commitStats are the committer's counters behind CommitStats: written by the committer
// only, read by anyone.
type commitStats struct {
	commits, writes, busyNS, commitNS atomic.Int64
	batchCommit                       time.Duration // the batch under way's time in COMMIT (committer only)
}

// CommitStats reports what the committer has done since Open: its transactions committed
// and their writes, the time it spent on batches (Busy) and, of that, in COMMIT (the WAL's
// writes and its fsync). Safe to call at any time; a batch's figures are all counted before
// any of its writes returns, so a writer that reads them after its write sees its batch.
func (s *Store) CommitStats() parley.CommitStats {
	return parley.CommitStats{
		Commits: s.stats.commits.Load(),
		Writes:  s.stats.writes.Load(),
		Busy:    time.Duration(s.stats.busyNS.Load()),
		Commit:  time.Duration(s.stats.commitNS.Load()),
	}
}

// take adds o to the batch, withdrawing its announcement.
func (s *Store) take(batch []*txOp, o *txOp) []*txOp {
	if o.coming {
		s.coming.Add(-1)
	}
	return append(batch, o)
}

func (s *Store) committer() {
	defer close(s.committerDone)
	idle := time.NewTimer(time.Hour)
	idle.Stop()
	hold := time.NewTimer(time.Hour)
	hold.Stop()
	for {
		var batch []*txOp
		select {
		case o := <-s.ops:
			batch = s.take(batch, o)
		default:
			// Nothing waiting: the moment to checkpoint if the WAL is long (checkpoint.go),
			// and, should nothing come for a while, to have the checkpointer copy the WAL.
			s.checkpointIfDue()
			var idled <-chan time.Time
			if s.idleWork() {
				idle.Reset(s.idleAfter)
				idled = idle.C
			}
			select {
			case o := <-s.ops:
				batch = s.take(batch, o)
				idle.Stop()
			case <-idled:
				s.idleCheckpoint()
				continue
			case <-s.quit:
				idle.Stop()
				return
			}
		}
		begun := time.Now()
		batch = s.holdFor(s.takeWaiting(batch), hold)
		s.commitBatch(batch, begun)
	}
}

// takeWaiting adds to the batch the writes already waiting, up to maxBatch; it never waits.
func (s *Store) takeWaiting(batch []*txOp) []*txOp {
	for len(batch) < maxBatch {
		select {
		case o := <-s.ops:
			batch = s.take(batch, o)
		default:
			return batch
		}
	}
	return batch
}

// yieldBelow: a batch smaller than this, with nothing announced, first lets the goroutines
// ready to run have the processor once (runtime.Gosched), and takes what they submitted.
// Under load the posts that follow a straggler are mostly not yet announced but ready to run
// (a request read, its handler not yet scheduled); on an idle server Gosched returns at once.
const yieldBelow = 4

// holdFor adds to the batch the writes announced on their way (PostsComing) that arrive
// within the commit wait: it returns as soon as none is announced, the batch is full, or the
// bound has passed. With none announced it returns at once (after one yield of the processor
// when the batch is small), timer untouched.
func (s *Store) holdFor(batch []*txOp, hold *time.Timer) []*txOp {
	if s.commitWait <= 0 {
		return batch
	}
	if len(batch) < yieldBelow && s.coming.Load() <= 0 {
		runtime.Gosched()
		batch = s.takeWaiting(batch)
	}
	if len(batch) >= maxBatch || s.coming.Load() <= 0 {
		return batch
	}
	hold.Reset(s.commitWait)
	defer hold.Stop()
	for len(batch) < maxBatch && s.coming.Load() > 0 {
		select {
		case o := <-s.ops:
			batch = s.take(batch, o)
		case <-hold.C:
			return batch
		}
	}
	return batch
}

// commitBatch runs and answers a batch the committer began taking at begun.
func (s *Store) commitBatch(batch []*txOp, begun time.Time) {
	s.walBatch(s.commits.Add(1) - 1)
	defer func() {
		s.commits.Add(1)
		// Counted before any write of the batch returns, as its commit and writes are; busy
		// first, so that a reader never sees more time in COMMIT than busy.
		s.stats.busyNS.Add(int64(time.Since(begun)))
		s.stats.commitNS.Add(int64(s.stats.batchCommit))
		s.stats.batchCommit = 0
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
	// more takes the writes waiting now (takeWaiting: without waiting, up to maxBatch in the
	// batch; late joiners, see runOnce); each one taken is answered with the batch.
	more := func() []*txOp {
		from := len(batch)
		batch = s.takeWaiting(batch)
		return batch[from:len(batch):len(batch)]
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
		s.runBatch(rt, batch, fail, more)
		return nil
	})
	if err != nil {
		fail(fmt.Errorf("begin: %w", err))
	}
}

// runBatch runs the batch in one transaction on the committer's connection: again without
// a write that may have left part of itself in it (see the top of this file).
func (s *Store) runBatch(rt *rawTx, batch []*txOp, fail func(error), more func() []*txOp) {
	live := make([]*txOp, 0, len(batch))
	for _, o := range batch {
		if err := o.ctx.Err(); err != nil {
			o.err = err
			continue
		}
		live = append(live, o)
	}
	for len(live) > 0 {
		bad, committed, all := s.runOnce(rt, live, fail, more)
		live = all
		if bad < 0 {
			if committed > 0 {
				s.batchCommitted(rt, committed)
				s.stats.commits.Add(1)
				s.stats.writes.Add(int64(committed))
			}
			return
		}
		// The write at bad keeps its error; the others run again, from scratch.
		live = append(live[:bad], live[bad+1:]...)
		for _, o := range live {
			o.err = nil
		}
		rt.b.reset()
	}
}

// runOnce runs the writes of live in one transaction, and then the writes that reached the
// committer meanwhile (more: late joiners), which would otherwise wait for this commit's fsync
// and then have one of their own; all is live with them. bad is the index in all of a write
// that failed after changing the transaction (which is then rolled back, nothing committed),
// or -1; committed is how many writes the transaction committed (0 when it did not commit). A
// failure of the transaction itself is given to every write (fail).
func (s *Store) runOnce(rt *rawTx, live []*txOp, fail func(error), more func() []*txOp) (bad, committed int, all []*txOp) {
	if err := rt.control(qBegin); err != nil {
		fail(fmt.Errorf("begin: %w", err))
		return -1, 0, live
	}
	t := txStmts{rt}
	stored := 0 // writes that ran without error and wait for the commit
	for i := 0; i < len(live); i++ {
		if i == len(live)-1 {
			// The last write of those taken: take in the writes waiting now, which the
			// ones before took the time to bring.
			if late := more(); len(late) > 0 {
				live = append(live[:len(live):len(live)], late...)
			}
		}
		o := live[i]
		if err := o.ctx.Err(); err != nil {
			// Cancelled while an earlier run of the batch was rolled back: it has not run.
			o.err = err
			continue
		}
		before := rt.writes
		if err := o.run(context.WithoutCancel(o.ctx), t); err != nil {
			o.err = err
			if rt.writes == before && refusal(err) {
				continue // it changed nothing
			}
			rt.control(qRollback)
			return i, 0, live
		}
		stored++
	}
	if stored == 0 {
		rt.control(qRollback)
		return -1, 0, live
	}
	if err := s.writeSeqs(rt); err != nil {
		rt.control(qRollback)
		fail(err)
		return -1, 0, live
	}
	if err := s.indexSeats(rt); err != nil {
		rt.control(qRollback)
		fail(err)
		return -1, 0, live
	}
	began := time.Now()
	err := rt.control(qCommit)
	s.stats.batchCommit += time.Since(began)
	if err != nil {
		// A commit that failed (busy, I/O) may leave the transaction open on the
		// connection; end it, or the next batch could not begin.
		rt.control(qRollback)
		fail(fmt.Errorf("commit: %w", err))
		return -1, 0, live
	}
	return -1, stored, live
}

// batchCommitted updates the memories with what a committed batch of n writes stored, before
// any of them returns: its next post must be checked against it.
func (s *Store) batchCommitted(rt *rawTx, n int) {
	s.dedupCommitted(&rt.b.dedup)
	s.seqsCommitted(&rt.b.seqs)
	s.seatIndexCommitted(&rt.b)
	s.search.committed(rt.b.search)
	s.wroteForCheckpoint(ckptPages(n))
}

// refusal tells whether err is the service's own answer to a write (a repeat, a room not
// found), found by reading: such a write ran no statement that changes the transaction, or
// it would not end there. Anything else (a driver error) may come from a statement SQLite
// gave up half-way, or from SQLite ending the transaction itself, so it is not trusted to
// have left the transaction as it was.
func refusal(err error) bool {
	var pe *parley.Error
	return errors.As(err, &pe)
}
