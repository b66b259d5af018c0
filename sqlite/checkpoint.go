package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"io"
	"sync/atomic"
)

// Checkpoints. In WAL mode a commit appends pages to the -wal file, and a checkpoint copies
// them back into the database file (with synchronous=FULL, two fsyncs), after which the next
// transaction writes the WAL from its start again. SQLite runs one by itself inside the commit
// that takes the WAL past wal_autocheckpoint pages (1,000 by default): inside the committer's
// commit, so every write of that batch, already written, waits for the copy before it is
// answered, and the writes arriving meanwhile wait too.
//
// So the committer checkpoints itself, between batches, when it has nothing to do: once the
// batches since the last checkpoint wrote about ckptEvery pages, at the first moment no write
// is waiting. Writes that arrive during the
// copy wait for it, but those already committed have been answered. SQLite's own checkpoint
// stays as a backstop at ckptBackstop pages, should the committer never be idle (or the
// writes go around it, as CreateSeat does); it is far enough that an idle moment comes first.
//
// A checkpoint on another connection would not block the committer at all, but it cannot
// catch up with a writer that never pauses: the WAL is then never written from its start
// again and grows without bound (160 MB after 3,000 appends in one try), and appends to an
// ever longer file make every fsync dearer.

// The copy itself need not stop the committer, though: a PASSIVE checkpoint on another
// connection copies the frames committed before it began while the committer goes on
// appending. So once the batches have written about ckptEvery pages, a checkpointer goroutine
// of its own connection copies them, and the committer's own checkpoint at its next idle
// moment after that only has the frames written meanwhile left to copy (a few batches' worth,
// and the fsync of the database file): it is what lets the WAL start again, and it is short.
// The committer does not checkpoint while the checkpointer runs (SQLite would refuse it as
// busy, and it would copy what the checkpointer is copying).

// ckptEvery is how many pages written make the checkpointer copy them (16 MB of WAL; each
// copy is followed by one of the committer's, which stops it for two fsyncs, so fewer copies
// mean fewer posts that wait for one); ckptBackstop is the writer's wal_autocheckpoint, in
// pages.
const (
	ckptEvery    = 4000
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
	done    chan struct{}
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
	s.ckpt = c
	go func() {
		defer close(c.done)
		for range c.kick {
			// A failure is left for the committer's own checkpoint and the next copy.
			s.passive(context.Background(), c.db)
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

// wroteForCheckpoint counts the pages a committed batch wrote (estimated), and has the
// checkpointer copy them once they make ckptEvery.
func (s *Store) wroteForCheckpoint(pages int) {
	s.ckptWritten += pages
	if s.ckptWritten < ckptEvery || s.ckpt == nil || s.ckpt.running.Load() {
		return
	}
	s.ckptWritten = 0
	s.ckptDue = true
	s.ckpt.running.Store(true)
	s.ckpt.kick <- struct{}{} // never blocks: running was false, so the channel is empty
}

// checkpointIfDue runs a PASSIVE checkpoint on the committer's connection once the
// checkpointer has copied what it was asked to (or without it, once enough pages were
// written). The caller makes sure no write is waiting. A failure is left for the next try:
// the WAL then only grows, which costs disk, not data.
func (s *Store) checkpointIfDue() {
	if s.ckpt == nil && s.ckptWritten >= ckptEvery {
		s.ckptWritten, s.ckptDue = 0, true
	}
	if !s.ckptDue || s.ckpt != nil && s.ckpt.running.Load() {
		return
	}
	s.ckptDue = false
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
		if n, err := walCheckpoint(rc); err == nil {
			s.ckptFrames.Store(n)
		}
		return nil
	})
}

// passive runs a PASSIVE checkpoint on db's connection.
func (s *Store) passive(ctx context.Context, db *sql.DB) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return
	}
	defer conn.Close()
	conn.Raw(func(dc any) error {
		if rc, ok := dc.(rawConn); ok {
			walCheckpoint(rc)
		}
		return nil
	})
}

// walCheckpoint runs PRAGMA wal_checkpoint(PASSIVE) and returns how many frames of the WAL
// are in the database file.
func walCheckpoint(rc rawConn) (int64, error) {
	rows, err := rc.QueryContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)", nil)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	vals := make([]driver.Value, 3) // busy, frames in the WAL, frames copied
	if err := rows.Next(vals); err != nil && err != io.EOF {
		return 0, err
	}
	n, _ := vals[2].(int64)
	return n, nil
}
