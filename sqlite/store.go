package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/sqlstore"
)

// The rooms, seats, runs and stats, and the reads of messages and asks, are sqlstore.Tables,
// embedded in Store; what SQLite does its own way is here.

// The statements of Append: the core's, and these. Open prepares them on the writer, so that
// one that does not compile fails Open rather than the first post; the committer prepares
// its own copies on its connection (rawtx.go).
const (
	qAnswer = `UPDATE asks SET state = $1, closed_by = $2
		WHERE room = $3 AND seq = $4 AND state = $5 AND (to_seat = $6 OR to_seat = 'all')`
	// Dedup's hash part in one statement: the seq of the seat's latest message with this hash,
	// and of its latest with this hash after ?4 (NULL: no window). Each reads the seat's entries
	// in seat_index with the hash's first 8 bytes (almost always none; their rows' whole hash is
	// compared), and the room's messages after those seat_index holds
	// (seatindex.go): O(log n) and at most about a thousand rows. Whether the latest is among the
	// seat's last N is then counted only when it matters (duplicate), from the committer's
	// memory or by qAfterFew (and for a seat of very many messages qAfterNear and qAfterSeat).
	qDupHash = `SELECT
		coalesce((SELECT max(seq) FROM (
			SELECT i.seq FROM seat_index AS i CROSS JOIN messages AS m ON m.room = i.room AND m.seq = i.seq
				WHERE i.room = ?1 AND i.seat = ?2 AND i.h8 = substr(?3, 1, 8) AND m.hash = ?3
			UNION ALL
			SELECT seq FROM messages WHERE room = ?1 AND seq > ` + qIndexedSeq + ` AND seat = ?2 AND hash = ?3)), 0),
		coalesce((SELECT max(seq) FROM (
			SELECT i.seq FROM seat_index AS i CROSS JOIN messages AS m ON m.room = i.room AND m.seq = i.seq
				WHERE i.room = ?1 AND i.seat = ?2 AND i.h8 = substr(?3, 1, 8) AND m.hash = ?3 AND m.time > ?4
			UNION ALL
			SELECT seq FROM messages WHERE room = ?1 AND seq > ` + qIndexedSeq + ` AND seat = ?2 AND hash = ?3 AND time > ?4)), 0)`
	// Whether a message is among the seat's last N is counted over the seat's seqs (qSeatSeqs):
	// qAfterFew reads at most ?4 of them (seatIndexScan+1) and counts those after seq ?3, which
	// settles it for any seat of no more than seatIndexScan messages. For a seat of more,
	// qAfterNear counts, up to N (?4), its messages among the room's ?5 messages after ?3,
	// through the primary key, and tells whether the room has messages beyond those ?5; and if
	// that does not settle it either, qAfterSeat counts, up to N (?4), the seat's messages
	// after ?3.
	qAfterFew  = `SELECT count(*), coalesce(sum(seq > ?3), 0) FROM (` + qSeatSeqs + ` LIMIT ?4)`
	qAfterNear = `SELECT (SELECT count(*) FROM (SELECT 1 FROM messages WHERE room = ?1 AND seat = ?2 AND seq > ?3 AND seq <= ?3 + ?5 LIMIT ?4)),
		EXISTS (SELECT 1 FROM messages WHERE room = ?1 AND seq > ?3 + ?5)`
	qAfterSeat = `SELECT count(*) FROM (SELECT seq FROM (` + qSeatSeqs + `) WHERE seq > ?3 LIMIT ?4)`
	qByKey     = sqlstore.QueryByKey
	qAddStat   = sqlstore.QueryAddStat
)

var appendQueries = []string{sqlstore.QueryNextSeq, qByKey, sqlstore.QueryLapse, qAnswer, sqlstore.QueryInsertMessage,
	sqlstore.QueryInsertAsk, qDupHash, qAfterFew, qAfterNear, qAfterSeat, qAddStat,
	qSeatCount, qSeatLatest, qSeatOlder, qRoomLast, qSeatRecent, qIndexTail, qIndexedTo}

// Append stores a post and updates asks in one transaction, shared with the other writes
// waiting at the same moment (see group.go).
func (s *Store) Append(ctx context.Context, a *parley.Append) (parley.Appended, error) {
	// Announced until the committer takes it (or it returns without reaching it): the room
	// service withdraws its own announcement just before this call (PostsComing).
	s.coming.Add(1)
	taken := false
	defer func() {
		if !taken {
			s.coming.Add(-1)
		}
	}()
	m, err := sqlstore.Prepare(a)
	if err != nil {
		return parley.Appended{}, err
	}
	if a.Poster != nil {
		// Before the append, as the post path read the seat before: a Sole store answers
		// from its seat cache, which every revocation and rotation updates at once.
		cur, err := s.Seat(ctx, m.Room, a.Poster.Name)
		if parley.ErrorCode(err) == parley.ENOTFOUND {
			cur, err = nil, nil
		}
		if err != nil {
			return parley.Appended{}, fmt.Errorf("append: seat: %w", err)
		}
		if err := parley.PosterError(m.Room, a.Poster, cur); err != nil {
			return parley.Appended{}, err
		}
	}
	// Encoded here, by the caller's goroutine, rather than by the committer, whose time every
	// post waits for.
	notes, err := marshalNotes(m.Notes)
	if err != nil {
		return parley.Appended{}, fmt.Errorf("append: %w", err)
	}
	var out parley.Appended
	taken = true // inTxComing withdraws it from here on
	err = s.inTxComing(ctx, true, s.appendOp(a, m, notes, &out))
	if err != nil {
		return parley.Appended{}, err
	}
	if !out.Replay {
		s.watch.Publish(out.Room, out.Seq)
	}
	return out, nil
}

// appendOp is the committer's write of Append, which leaves its result in out.
// notes is m.Notes as stored (marshalNotes).
func (s *Store) appendOp(a *parley.Append, m parley.Message, notes string, out *parley.Appended) func(context.Context, txStmts) error {
	return func(ctx context.Context, t txStmts) error {
		var err error
		*out, err = s.appendTx(ctx, t, a, m, notes)
		return err
	}
}

// appendTx is Append inside its (shared) transaction, after which the caller publishes. The
// transaction holds SQLite's write lock from its start (BEGIN IMMEDIATE), so nothing changes
// between its statements, and the seq it takes from rooms.last_seq cannot be taken by anyone
// else. A write refused before it wrote anything gives the seq back (undo, seq.go); one that
// fails after it wrote is rolled back with its batch's transaction, seq and all, and the
// batch runs again without it (group.go); so seqs stay gapless. A replay is found before
// anything is written.
func (s *Store) appendTx(ctx context.Context, t txStmts, a *parley.Append, m parley.Message, notes string) (_ parley.Appended, err error) {
	if m.IdempotencyKey != "" {
		orig, err := sqlstore.ScanMessage(t.queryRow(ctx, qByKey, m.Room, m.Seat, m.IdempotencyKey))
		switch {
		case err == nil:
			return parley.Appended{Message: orig, Replay: true}, nil
		case !errors.Is(err, sql.ErrNoRows):
			return parley.Appended{}, fmt.Errorf("append: idempotency key: %w", err)
		}
	}

	seq, undo, err := s.nextSeq(t, m.Room)
	if parley.ErrorCode(err) == parley.ENOTFOUND {
		return parley.Appended{}, err
	}
	if err != nil {
		return parley.Appended{}, fmt.Errorf("append: %w", err)
	}
	defer func() {
		if err != nil {
			undo()
		}
	}()

	if orig, err := s.duplicateTx(ctx, t, m.Room, m.Seat, m.Hash, a.DedupSince, a.DedupLast); err != nil {
		return parley.Appended{}, fmt.Errorf("append: dedup: %w", err)
	} else if orig != 0 {
		return parley.Appended{}, sqlstore.DuplicateError(orig)
	}

	if a.Lapses != nil {
		res, err := t.exec(ctx, sqlstore.QueryLapse, sqlstore.LapseArgs(a, seq, m.Room)...)
		if err != nil {
			return parley.Appended{}, fmt.Errorf("append: lapse ask: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return parley.Appended{}, fmt.Errorf("append: lapse ask: %w", err)
		} else if n == 0 {
			return parley.Appended{}, sqlstore.AskNotOpen(a.Lapses.Seq, a.Lapses.Line)
		}
	}

	if err := t.t.execMessage(&m, seq, notes); err != nil {
		return parley.Appended{}, fmt.Errorf("append: insert message: %w", err)
	}

	for _, ask := range a.Asks {
		if _, err := t.exec(ctx, sqlstore.QueryInsertAsk, sqlstore.OpenAsk(dialect{}, ask, &m, seq)...); err != nil {
			if isUnique(err) {
				return parley.Appended{}, parley.Errorf(parley.EINVALID, "two asks on line %d", ask.Line)
			}
			return parley.Appended{}, fmt.Errorf("append: insert ask: %w", err)
		}
	}

	for _, answered := range a.Answers {
		if _, err := t.exec(ctx, qAnswer,
			parley.AskAnswered, seq, m.Room, answered, parley.AskOpen, m.Seat); err != nil {
			return parley.Appended{}, fmt.Errorf("append: answer asks of #%d: %w", answered, err)
		}
	}
	t.stored(m.Room, seq, seq)
	s.storedTx(t, m.Room, m.Seat, seq, m.Time, m.Hash)
	return parley.Appended{Message: sqlstore.Stored(m, seq)}, nil
}

// querier is what both stmtCache and txStmts offer.
type querier interface {
	QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row
}

// dedupNearScan bounds the room's messages qAfterNear looks at (a variable for the tests);
// seatIndexScan (dedup.go) the seat's index entries qAfterFew reads.
var dedupNearScan = 16384

// duplicate returns the latest seq among the seat's messages with this hash that were posted
// after since (when set) or are among its last n (when n > 0), or 0. among, when not nil,
// may tell whether the seat has fewer than n messages after a seq (known), sparing the count.
func duplicate(ctx context.Context, q querier, room, seat string, hash []byte, since time.Time, n int,
	among func(seq int64) (yes, known bool)) (int64, error) {
	if len(hash) == 0 {
		return 0, nil
	}
	var window any // NULL: no window
	if !since.IsZero() {
		window = toMicros(since)
	}
	var latest, inWindow int64
	if err := q.QueryRow(ctx, qDupHash, room, seat, hash, window).Scan(&latest, &inWindow); err != nil {
		return 0, err
	}
	// Only the latest message with the hash can be the answer of "among the last n", and
	// when it is also the latest in the window, the answer is that already.
	if latest == 0 || n <= 0 || latest == inWindow {
		return inWindow, nil
	}
	if among != nil {
		if yes, known := among(latest); known {
			if yes {
				return latest, nil
			}
			return inWindow, nil
		}
	}
	yes, err := amongLast(ctx, q, room, seat, latest, n)
	if err != nil {
		return 0, err
	}
	if yes {
		return latest, nil
	}
	return inWindow, nil
}

// amongLast tells whether the seat has fewer than n messages after seq (see qAfterFew).
func amongLast(ctx context.Context, q querier, room, seat string, seq int64, n int) (bool, error) {
	var seen, after int64
	if err := q.QueryRow(ctx, qAfterFew, room, seat, seq, int64(seatIndexScan+1)).Scan(&seen, &after); err != nil {
		return false, err
	}
	if after >= int64(n) || seen <= int64(seatIndexScan) {
		return after < int64(n), nil
	}
	var near int64
	var beyond bool
	if err := q.QueryRow(ctx, qAfterNear, room, seat, seq, int64(n), int64(dedupNearScan)).Scan(&near, &beyond); err != nil {
		return false, err
	}
	if near >= int64(n) || !beyond {
		return near < int64(n), nil
	}
	var all int64
	if err := q.QueryRow(ctx, qAfterSeat, room, seat, seq, int64(n)).Scan(&all); err != nil {
		return false, err
	}
	return all < int64(n), nil
}

// Duplicate returns the seq of the seat's latest earlier message with this hash after since
// or among its last n messages, or 0. It reads the database (a snapshot that may be newer than
// the committer's memory), so it asks the memory only whether there is surely none.
func (s *Store) Duplicate(ctx context.Context, room, seat string, hash []byte, since time.Time, n int) (int64, error) {
	if len(hash) == 0 || s.dedup.surelyNone(room, seat, hash, since, n) {
		return 0, nil
	}
	seq, err := duplicate(ctx, s.r, room, seat, hash, since, n, nil)
	if err != nil {
		return 0, fmt.Errorf("duplicate: %w", err)
	}
	return seq, nil
}

// AddStat adds delta to a per-room, per-seat counter. ENOTFOUND for the room.
func (s *Store) AddStat(ctx context.Context, room, seat, key string, delta int64) error {
	// Through the committer: every post adds stats, and they share its fsyncs.
	err := s.inTx(ctx, func(ctx context.Context, t txStmts) error {
		_, err := t.exec(ctx, qAddStat, room, seat, key, delta)
		return err
	})
	return sqlstore.StatError(room, dialect{}, err)
}

// Watch returns a channel that receives the room's new last seq after appends by this Store,
// until ctx ends or the Store closes.
func (s *Store) Watch(ctx context.Context, room string) <-chan int64 {
	return s.watch.Subscribe(ctx, room)
}

// WatchSeats returns a channel that receives a SeatChange after every revocation or rotation
// by this Store, until ctx ends or the Store closes.
func (s *Store) WatchSeats(ctx context.Context) <-chan parley.SeatChange {
	return s.seats.Subscribe(ctx)
}

// The core's names under this package's earlier ones, for code written against them.
const (
	messageColumns = sqlstore.MessageColumns
	askColumns     = sqlstore.AskColumns
)

// ImportRoom writes a whole room in one transaction of the committer (see parley.Store).
func (s *Store) ImportRoom(ctx context.Context, a *parley.RoomArchive) error {
	defer s.seatCache.drop() // it creates seats
	if a != nil && a.Room != nil {
		defer s.dedup.forgetRoom(a.Room.Name) // and messages
		defer s.runs.drop(a.Room.Name)        // and runs
	}
	return s.inTx(ctx, func(ctx context.Context, t txStmts) error {
		if err := sqlstore.ImportRoom(ctx, txDB{t}, dialect{}, a); err != nil {
			return err
		}
		t.t.b.storedSome(a.Room.Name)
		return nil
	})
}

// txDB is a transaction of the committer as a sqlstore.DB.
type txDB struct{ t txStmts }

// Every statement of an import counts as a write (group.go): it may be an INSERT … RETURNING.

func (d txDB) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	d.t.t.wrote()
	return d.t.queryRow(ctx, query, args...)
}

func (d txDB) Query(ctx context.Context, query string, args []any, each func(sqlstore.Row) error) error {
	d.t.t.wrote()
	return d.t.t.query(query, args, func(r *rawRow) error { return each(r) })
}

func (d txDB) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := d.t.exec(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
