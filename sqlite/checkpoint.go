package sqlite

import (
	"context"
	"database/sql/driver"
	"io"
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

// ckptEvery is how many pages written make the committer checkpoint when next idle, SQLite's
// own default; ckptBackstop is the writer's wal_autocheckpoint, in pages.
const (
	ckptEvery    = 1000
	ckptBackstop = 4000
)

// ckptPages estimates the pages a batch of n writes adds to the WAL: about ten that every
// commit changes (the room, the search index, the index pages the appends share) and two per
// append (its message and its seat's index pages). It only decides when to checkpoint.
func ckptPages(n int) int { return 10 + 2*n }

// checkpointIfDue runs a PASSIVE checkpoint on the committer's connection if enough pages
// were written since the last one. The caller makes sure no write is waiting. A failure is
// left for the next try: the WAL then only grows, which costs disk, not data.
func (s *Store) checkpointIfDue() {
	if s.ckptWritten < ckptEvery {
		return
	}
	s.ckptWritten = 0
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
		rows, err := rc.QueryContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)", nil)
		if err != nil {
			return err
		}
		defer rows.Close()
		vals := make([]driver.Value, 3) // busy, frames in the WAL, frames copied
		if err := rows.Next(vals); err != nil && err != io.EOF {
			return err
		}
		if n, ok := vals[2].(int64); ok {
			s.ckptFrames.Store(n)
		}
		return nil
	})
}
