package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"io"
	"sync/atomic"
)

// Checkpoints. In WAL mode a commit appends pages to the -wal file, and a checkpoint copies
// them back into the database file (with synchronous=FULL, two fsyncs). A write transaction
// that begins when every frame of the WAL is in the database file (and no reader holds an
// older snapshot) writes the WAL from its start again, whichever connection's checkpoint
// copied the frames; until then the WAL only grows. SQLite runs a checkpoint by itself inside
// the commit that takes the WAL past wal_autocheckpoint pages: inside the committer's commit,
// so every write of that batch, already written, waits for the copy, and so do the writes
// arriving meanwhile. That stays only as a backstop, at ckptBackstop pages.
//
// A PASSIVE checkpoint on another connection copies the frames committed before it began
// while the committer goes on appending, and does not stop it. So a checkpointer goroutine on
// its own connection does the copying: every ckptEvery pages written, and once the committer
// has had no write for searchIdle (then it normally copies every frame, and the next batch
// starts the WAL again). Under a load that never pauses that long, though, each copy leaves
// the frames written while it ran, and the WAL would grow without bound (and every append to
// a longer file costs more). So the committer counts the pages written since the WAL last
// started again (walPages, estimated per batch and corrected with the count each copy reports)
// and once it holds ckptLimit pages, checkpoints itself at its first moment with no write
// waiting, after a copy of the checkpointer's: the frames written since that copy and two
// fsyncs, a stop of 6 to 16 ms for the writes arriving then (measured at a load of 3 on two
// cores), once per ckptLimit pages: 4 times per 10,000 posts at 20 seats, where it was 7 to 9
// times with a stop after every copy. The committer does not checkpoint while the checkpointer
// runs (SQLite would refuse it as busy).
//
// Why not let the WAL grow longer still: at ckptLimit 24,000 the committer stopped once per
// 10,000 posts, but a WAL that grows to 100 MB is written to new blocks of the file rather
// than over old ones, and the bench's system time per post rose about 10% (4 alternated runs
// against 6,000 and against a stop after every copy); the p99 did not move measurably.

// ckptEvery is how many pages written make the checkpointer copy them (16 MB of WAL);
// ckptLimit is how long the WAL may grow (in pages, 32 MB) before the committer checkpoints
// itself; ckptIdle is the least the WAL must hold for an idle copy to be worth its two fsyncs;
// ckptBackstop is the writer's wal_autocheckpoint, in pages.
const (
	ckptEvery    = 4000
	ckptLimit    = 8000
	ckptIdle     = 1000
	ckptBackstop = 16000
)

// ckptPages estimates the pages a batch of n writes adds to the WAL: about ten that every
// commit changes (the room, the index pages the appends share) and two per append (its
// message and its seat's index pages). It only decides when to checkpoint.
func ckptPages(n int) int { return 10 + 2*n }

// checkpointer is the goroutine that copies the WAL into the database beside the committer.
type checkpointer struct {
	db      *sql.DB       // one connection, its own
	kick    chan struct{} // the committer asks for a copy (buffered: one waits at most)
	running atomic.Bool   // a copy is under way, or asked for
	copies  atomic.Int64  // copies made (for the tests)
	// whole is the committer's count (Store.commits) under which a copy found every frame of
	// the WAL copied, no batch running or committed meanwhile; -1 before any.
	whole atomic.Int64
	// log is how many frames the WAL held when the last copy began (a copy reports it before
	// it counts itself in copies); the committer corrects its estimate with it.
	log  atomic.Int64
	done chan struct{}
}

// startCheckpointer opens the checkpointer's connection and starts it.
func (s *Store) startCheckpointer(dsn string) error {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	c := &checkpointer{db: db, kick: make(chan struct{}, 1), done: make(chan struct{})}
	c.whole.Store(-1)
	s.ckpt = c
	go func() {
		defer close(c.done)
		for range c.kick {
			// A failure is left for the next copy, and the committer's own checkpoint.
			before := s.commits.Load()
			whole, log := s.passive(context.Background(), c.db)
			c.log.Store(log)
			if after := s.commits.Load(); whole && before == after && before%2 == 0 {
				c.whole.Store(before)
			}
			c.copies.Add(1)
			c.running.Store(false)
		}
	}()
	return nil
}

// stopCheckpointer waits for the copy under way, if any, and closes the connection. The
// committer has stopped: nothing kicks it any more.
func (s *Store) stopCheckpointer() error {
	if s.ckpt == nil {
		return nil
	}
	close(s.ckpt.kick)
	<-s.ckpt.done
	return s.ckpt.db.Close()
}

// kickCheckpointer has the checkpointer copy the WAL, unless it is at it already.
func (s *Store) kickCheckpointer() {
	if s.ckpt == nil || s.ckpt.running.Load() {
		return
	}
	s.ckptWritten = 0
	s.ckpt.running.Store(true)
	s.ckpt.kick <- struct{}{} // never blocks: running was false, so the channel is empty
}

// walStarts tells whether the batch about to begin writes the WAL from its start: the
// checkpointer copied every frame and no batch came since. count is Store.commits before
// that batch (even).
func (s *Store) walStarts(count int64) bool {
	return s.ckpt != nil && s.ckpt.whole.Load() == count
}

// walBatch brings walPages up to date before a batch begins (count as for walStarts): zero
// when the batch starts the WAL again, else at least what the checkpointer's last copy found
// in the WAL (the estimate per batch is rough, and a reader may have kept the WAL from
// starting again after a copy). Errors keep to the high side: a checkpoint too many costs
// one short stop, a checkpoint too few a longer WAL.
func (s *Store) walBatch(count int64) {
	if s.ckpt == nil {
		return
	}
	if s.walStarts(count) {
		s.walPages, s.ckptDue = 0, false
		s.ckptSeen = s.ckpt.copies.Load()
		return
	}
	if n := s.ckpt.copies.Load(); n != s.ckptSeen {
		s.ckptSeen = n
		s.walPages = max(s.walPages, int(s.ckpt.log.Load()))
	}
}

// wroteForCheckpoint counts the pages a committed batch wrote (estimated), has the
// checkpointer copy them once they make ckptEvery, and the committer checkpoint itself once
// the WAL holds ckptLimit.
func (s *Store) wroteForCheckpoint(pages int) {
	s.ckptWritten += pages
	s.walPages += pages
	s.ckptIdled = false
	if s.ckpt == nil {
		if s.ckptWritten >= ckptEvery {
			s.ckptWritten, s.ckptDue = 0, true
		}
		return
	}
	if s.ckptWritten >= ckptEvery || s.walPages >= s.ckptLimit && !s.ckptDue {
		s.kickCheckpointer()
	}
	if s.walPages >= s.ckptLimit {
		s.ckptDue = true
	}
}

// idleWork tells whether the committer has checkpoint work for its idle timer.
func (s *Store) idleWork() bool {
	if s.ckptDue {
		return true
	}
	return s.ckpt != nil && !s.ckptIdled && s.walPages >= ckptIdle && !s.walStarts(s.commits.Load())
}

// idleCheckpoint is the committer's idle timer's share: the checkpointer copies what the WAL
// holds (once an idle spell), and the committer's own checkpoint is tried again.
func (s *Store) idleCheckpoint() {
	if s.ckpt != nil && !s.ckptIdled && s.walPages >= ckptIdle {
		s.ckptIdled = true
		s.kickCheckpointer()
	}
	s.checkpointIfDue()
}

// checkpointIfDue runs a PASSIVE checkpoint on the committer's connection once the WAL holds
// ckptLimit pages (or, without the checkpointer, once ckptEvery pages were written) and the
// checkpointer is not copying. The caller makes sure no write is waiting. A failure is left
// for the next try: the WAL then only grows, which costs disk, not data.
func (s *Store) checkpointIfDue() {
	if !s.ckptDue || s.ckpt != nil && s.ckpt.running.Load() {
		return
	}
	s.ckptDue = false
	if s.ckpt != nil {
		s.ckptSeen = s.ckpt.copies.Load() // reports of copies before this checkpoint are past
	}
	if s.walStarts(s.commits.Load()) {
		return // the checkpointer's last copy left nothing: the next batch starts the WAL again
	}
	conn, err := s.write.Conn(context.Background())
	if err != nil {
		return
	}
	defer conn.Close()
	conn.Raw(func(dc any) error {
		rc, ok := dc.(rawConn)
		if !ok {
			return nil
		}
		if n, _, whole, err := walCheckpoint(rc); err == nil {
			s.ckptFrames.Store(n)
			if whole {
				s.walPages = 0
			} else {
				// A reader holds an older snapshot: try again after another ckptEvery pages,
				// not at every idle moment.
				s.walPages = s.ckptLimit - ckptEvery
			}
		}
		return nil
	})
}

// passive runs a PASSIVE checkpoint on db's connection and tells whether it found every frame
// of the WAL copied, and how many frames the WAL held.
func (s *Store) passive(ctx context.Context, db *sql.DB) (whole bool, log int64) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return false, 0
	}
	defer conn.Close()
	conn.Raw(func(dc any) error {
		if rc, ok := dc.(rawConn); ok {
			_, log, whole, _ = walCheckpoint(rc)
		}
		return nil
	})
	return whole, log
}

// walCheckpoint runs PRAGMA wal_checkpoint(PASSIVE) and returns how many frames of the WAL
// are in the database file, how many the WAL holds, and whether that is all of them.
func walCheckpoint(rc rawConn) (copied, log int64, whole bool, err error) {
	rows, err := rc.QueryContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)", nil)
	if err != nil {
		return 0, 0, false, err
	}
	defer rows.Close()
	vals := make([]driver.Value, 3) // busy, frames in the WAL, frames copied
	if err := rows.Next(vals); err != nil && err != io.EOF {
		return 0, 0, false, err
	}
	busy, _ := vals[0].(int64)
	log, _ = vals[1].(int64)
	n, _ := vals[2].(int64)
	return n, log, busy == 0 && n == log, nil
}
