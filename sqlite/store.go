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
	// Dedup in one statement: the seat's latest message with this hash after ?4 (NULL: no
	// window), and its latest with this hash if that is among its last ?5 (0: no count).
	// Both go through the index on (room, seat, hash, seq), which finds the few candidates
	// (almost always none); only then does the (room, seat, seq) index count, at most ?5
	// entries, the seat's messages after it. Walking to the seat's Nth-last message first
	// cost up to N index steps on every post, and two statements cost twice the overhead.
	qDup = `SELECT max(
		coalesce((SELECT max(seq) FROM messages WHERE room = ?1 AND seat = ?2 AND hash = ?3 AND time > ?4), 0),
		coalesce((SELECT max(s) FROM (SELECT max(seq) AS s FROM messages WHERE room = ?1 AND seat = ?2 AND hash = ?3) AS h
			WHERE ?5 > 0 AND (SELECT count(*) FROM (SELECT 1 FROM messages WHERE room = ?1 AND seat = ?2 AND seq > h.s LIMIT ?5)) < ?5), 0))`
	qByKey   = sqlstore.QueryByKey
	qAddStat = sqlstore.QueryAddStat
)

var appendQueries = []string{sqlstore.QueryNextSeq, qByKey, sqlstore.QueryLapse, qAnswer, sqlstore.QueryInsertMessage,
	sqlstore.QueryInsertAsk, qDup, qAddStat}

// Append stores a post and updates asks in one transaction, shared with the other writes
// waiting at the same moment (see group.go).
func (s *Store) Append(ctx context.Context, a *parley.Append) (parley.Appended, error) {
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
	err = s.inTx(ctx, s.appendOp(a, m, notes, &out))
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

// duplicate returns the latest seq among the seat's messages with this hash that were posted
// after since (when set) or are among its last n (when n > 0), or 0.
func duplicate(ctx context.Context, q querier, room, seat string, hash []byte, since time.Time, n int) (int64, error) {
	if len(hash) == 0 {
		return 0, nil
	}
	var window any // NULL: no window
	if !since.IsZero() {
		window = toMicros(since)
	}
	var found int64
	if err := q.QueryRow(ctx, qDup, room, seat, hash, window, int64(max(n, 0))).Scan(&found); err != nil {
		return 0, err
	}
	return found, nil
}

// Duplicate returns the seq of the seat's latest earlier message with this hash after since
// or among its last n messages, or 0.
func (s *Store) Duplicate(ctx context.Context, room, seat string, hash []byte, since time.Time, n int) (int64, error) {
	if len(hash) == 0 || s.dedup.surelyNone(room, seat, hash, since, n) {
		return 0, nil
	}
	seq, err := duplicate(ctx, s.r, room, seat, hash, since, n)
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
