package sqlite

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/parleyhq/parley/internal/sqlstore"
)

// Each append takes its room's next seq. Without Sole that is an UPDATE … RETURNING of
// rooms.last_seq per append (sqlstore.QueryNextSeq), the row locked by the transaction. A
// Sole store's committer, which makes every append of the file, keeps each room's last seq in
// memory instead: it reads it once (SELECT, in the transaction), counts on from there for the
// writes of a batch, and writes each room's new last seq once, just before COMMIT (qSetSeq),
// so that rooms.last_seq is what it always was at every commit. A write that fails gives its
// seq back, as the transaction's rollback would have (seqs stay gapless); a batch that fails leaves the
// memory as it was.

const (
	qRoomSeq = `SELECT last_seq FROM rooms WHERE name = $1`
	qSetSeq  = `UPDATE rooms SET last_seq = $1 WHERE name = $2`
)

// seqMemory is each room's committed last seq; only the committer uses it.
type seqMemory struct {
	on   bool // Sole
	last map[string]int64
}

// seqBatch is the batch's view: each room's last seq taken so far in the transaction.
type seqBatch struct {
	last map[string]int64
}

// nextSeq takes the room's next seq in the transaction; undo gives it back (call it when the
// write that took it fails). ENOTFOUND for the room.
func (s *Store) nextSeq(t txStmts, room string) (seq int64, undo func(), err error) {
	if !s.seqs.on {
		err := t.t.queryRow(sqlstore.QueryNextSeq, room).Scan(&seq)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, nil, sqlstore.RoomNotFound(room)
		}
		// The UPDATE is a write: if the append then fails, the committer rolls the batch
		// back and runs it again without it (group.go), and the seq goes with it.
		t.t.wrote()
		return seq, func() {}, err
	}
	b := &t.t.b.seqs
	last, ok := b.last[room]
	if !ok {
		if last, ok = s.seqs.last[room]; !ok {
			err := t.t.queryRow(qRoomSeq, room).Scan(&last)
			if errors.Is(err, sql.ErrNoRows) {
				return 0, nil, sqlstore.RoomNotFound(room)
			}
			if err != nil {
				return 0, nil, err
			}
		}
	}
	if b.last == nil {
		b.last = map[string]int64{}
	}
	b.last[room] = last + 1
	return last + 1, func() { b.last[room] = last }, nil
}

// writeSeqs writes the rooms' last seqs the batch took, before COMMIT.
func (s *Store) writeSeqs(t *rawTx) error {
	for room, last := range t.b.seqs.last {
		if prev, ok := s.seqs.last[room]; ok && prev == last {
			continue
		}
		res, err := t.exec(qSetSeq, last, room)
		if err != nil {
			return fmt.Errorf("seq of room %s: %w", room, err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return fmt.Errorf("seq of room %s: %d rows, %v", room, n, err)
		}
	}
	return nil
}

// seqsCommitted keeps the batch's last seqs, once it has committed.
func (s *Store) seqsCommitted(b *seqBatch) {
	if len(b.last) == 0 {
		return
	}
	if s.seqs.last == nil {
		s.seqs.last = map[string]int64{}
	}
	for room, last := range b.last {
		s.seqs.last[room] = last
	}
}
