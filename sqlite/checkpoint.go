package sqlite

import (
	"context"
	"database/sql"
	"time"
)

// Checkpoints. In WAL mode a commit appends pages to the -wal file, and a checkpoint copies
// them back into the database file (with synchronous=FULL, two fsyncs). SQLite runs one by
// itself inside the commit that takes the WAL past 1,000 pages: on the committer, so every
// write waiting in the next batch waits for it too, a few milliseconds every few hundred
// posts, which is most of a busy server's tail latency. So the writer's connection runs
// with wal_autocheckpoint=0, and a goroutine of its own checkpoints on its own connection
// (PASSIVE: it never blocks the writer nor readers, and takes only the frames they no longer
// need), after every ckptEvery writes the committer commits, and once a second (which finds
// nothing to do, cheaply, when nothing was written; and catches the writes that do not pass
// the committer, such as CreateSeat).

// ckptEvery is how many committed writes kick a checkpoint (about 3 pages each).
const ckptEvery = 300

// ckptIdle is how often the checkpointer looks for anything left to copy.
var ckptIdle = time.Second // a variable for the tests

// startCheckpointer starts the goroutine that checkpoints on db (one connection, not
// query_only); stopCheckpointer stops it.
func (s *Store) startCheckpointer(db *sql.DB) {
	s.ckpt = db
	s.ckptKick = make(chan struct{}, 1)
	s.ckptQuit = make(chan struct{})
	s.ckptDone = make(chan struct{})
	go s.checkpointer()
}

func (s *Store) stopCheckpointer() {
	if s.ckptQuit == nil {
		return
	}
	close(s.ckptQuit)
	<-s.ckptDone
}

// kickCheckpoint is called by the committer after each commit of n writes.
func (s *Store) kickCheckpoint(n int) {
	if s.ckptKick == nil {
		return
	}
	s.ckptWrites += n
	if s.ckptWrites < ckptEvery {
		return
	}
	s.ckptWrites = 0
	select {
	case s.ckptKick <- struct{}{}:
	default: // one is pending already
	}
}

func (s *Store) checkpointer() {
	defer close(s.ckptDone)
	tick := time.NewTicker(ckptIdle)
	defer tick.Stop()
	for {
		select {
		case <-s.ckptQuit:
			return
		case <-s.ckptKick:
		case <-tick.C:
		}
		s.checkpoint()
	}
}

// checkpoint copies what it can of the WAL into the database. A failure is left for the next
// one: the WAL then only grows, which costs disk, not data.
func (s *Store) checkpoint() {
	var busy, log, done int64
	if err := s.ckpt.QueryRowContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &log, &done); err == nil {
		s.ckptFrames.Store(done)
	}
}
