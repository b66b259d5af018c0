package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/sqlstore"
)

// The rooms, seats, runs and stats, and the reads of messages and asks, are sqlstore.Tables,
// embedded in Store; what PostgreSQL does its own way is here.

// RevokeSeat marks a seat revoked at t. ENOTFOUND.
func (s *Store) RevokeSeat(ctx context.Context, room, name string, t time.Time) error {
	// The NOTIFY goes out with the update's commit, to every process (seatChannel).
	tag, err := s.pool.Exec(ctx, `WITH u AS (UPDATE seats SET revoked_at = $1 WHERE room = $2 AND name = $3 RETURNING 1)
		SELECT pg_notify('`+seatChannel+`', $4) FROM u`, t, room, name, room+" "+name)
	if err != nil {
		return fmt.Errorf("revoke seat: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return sqlstore.SeatNotFound(room, name)
	}
	return nil
}

// SetSeatToken replaces a seat's token hash. ENOTFOUND.
func (s *Store) SetSeatToken(ctx context.Context, room, name string, hash []byte) error {
	tag, err := s.pool.Exec(ctx, `WITH u AS (UPDATE seats SET token_hash = $1 WHERE room = $2 AND name = $3 RETURNING 1)
		SELECT pg_notify('`+seatChannel+`', $4) FROM u`, sqlstore.NullBytes(hash), room, name, room+" "+name)
	if sqlState(err) == uniqueViolation {
		return sqlstore.TokenTaken()
	}
	if err != nil {
		return fmt.Errorf("set seat token: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return sqlstore.SeatNotFound(room, name)
	}
	return nil
}

// Append stores a post and updates asks in one transaction. Raising rooms.last_seq first locks
// the room's row: every later statement runs with the appends of other processes to this room
// either committed (and visible: READ COMMITTED takes a new snapshot per statement) or waiting.
//
// The appends of this process to one room waiting at the same moment share that transaction
// and its commit (group.go), each in its own savepoint: one holder of the room's lock and one
// WAL flush for all of them, instead of one after the other.
func (s *Store) Append(ctx context.Context, a *parley.Append) (parley.Appended, error) {
	m, err := sqlstore.Prepare(a)
	if err != nil {
		return parley.Appended{}, err
	}
	return s.group(ctx, a, m)
}

// appendTx is Append inside its (shared) transaction, in a savepoint that the caller rolls
// back to when it fails or is a replay. It does not commit.
func appendTx(ctx context.Context, tx pgx.Tx, a *parley.Append, m parley.Message) (parley.Appended, error) {
	seq, orig, err := lockAndCheck(ctx, tx, a, &m)
	if err != nil || orig != nil {
		return parley.Appended{Message: orig, Replay: orig != nil}, err
	}
	args, err := sqlstore.MessageArgs(dialect{}, &m, seq)
	if err != nil {
		return parley.Appended{}, err
	}
	// The writes go in one batch: one round trip instead of one per statement. The lapse goes
	// first, so that its result can be read before the others'.
	b := &pgx.Batch{}
	if a.Lapses != nil {
		b.Queue(sqlstore.QueryLapse, sqlstore.LapseArgs(a, seq, m.Room)...)
	}
	b.Queue(sqlstore.QueryInsertMessage, args...)
	for _, ask := range a.Asks {
		b.Queue(sqlstore.QueryInsertAsk, sqlstore.OpenAsk(dialect{}, ask, &m, seq)...)
	}
	if len(a.Answers) > 0 {
		b.Queue(`UPDATE asks SET state = $1, closed_by = $2
			WHERE room = $3 AND seq = ANY($4) AND state = $5 AND (to_seat = $6 OR to_seat = 'all')`,
			parley.AskAnswered, seq, m.Room, a.Answers, parley.AskOpen, m.Seat)
	}
	// Delivered to every listener when, and only if, the transaction commits.
	b.Queue(`SELECT pg_notify($1, $2)`, channel, payload(m.Room, seq))
	br := tx.SendBatch(ctx, b)
	if a.Lapses != nil {
		tag, err := br.Exec()
		if err == nil && tag.RowsAffected() == 0 {
			br.Close()
			return parley.Appended{}, sqlstore.AskNotOpen(a.Lapses.Seq, a.Lapses.Line)
		}
		if err != nil {
			br.Close()
			return parley.Appended{}, fmt.Errorf("append: lapse ask: %w", err)
		}
	}
	if err := br.Close(); err != nil {
		if sqlState(err) == uniqueViolation && len(a.Asks) > 0 {
			return parley.Appended{}, parley.Errorf(parley.EINVALID, "two asks on one line")
		}
		return parley.Appended{}, fmt.Errorf("append: %w", err)
	}
	return parley.Appended{Message: sqlstore.Stored(m, seq)}, nil
}

// lockAndCheck takes the room's next seq, which locks its row, and then runs the idempotency
// and dedup checks, all in one round trip: statements of a batch run in order, so the checks
// run after the lock and see every append to the room that committed before it. On a replay
// it returns the original message (orig).
func lockAndCheck(ctx context.Context, tx pgx.Tx, a *parley.Append, m *parley.Message) (seq int64, orig *parley.Message, err error) {
	b := &pgx.Batch{}
	b.Queue(`SAVEPOINT op`) // see group.go: in the same round trip
	b.Queue(sqlstore.QueryNextSeq, m.Room)
	if m.IdempotencyKey != "" {
		b.Queue(qByKey, m.Room, m.Seat, m.IdempotencyKey)
	}
	dedup := wantDuplicate(m.Hash, a.DedupSince, a.DedupLast)
	if dedup {
		b.Queue(qDuplicate, duplicateArgs(m.Room, m.Seat, m.Hash, a.DedupSince, a.DedupLast)...)
	}
	br := tx.SendBatch(ctx, b)
	defer func() {
		if cerr := br.Close(); cerr != nil && err == nil {
			seq, orig, err = 0, nil, fmt.Errorf("append: %w", cerr)
		}
	}()

	if _, err := br.Exec(); err != nil {
		return 0, nil, fmt.Errorf("append: savepoint: %w", err)
	}
	err = br.QueryRow().Scan(&seq)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil, sqlstore.RoomNotFound(m.Room)
	}
	if err != nil {
		return 0, nil, fmt.Errorf("append: %w", err)
	}
	if m.IdempotencyKey != "" {
		orig, err := sqlstore.ScanMessage(br.QueryRow())
		switch {
		case err == nil:
			return 0, orig, nil // the rollback returns the seq
		case !errors.Is(err, pgx.ErrNoRows):
			return 0, nil, fmt.Errorf("append: idempotency key: %w", err)
		}
	}
	if dedup {
		var dup int64
		if err := br.QueryRow().Scan(&dup); err != nil {
			return 0, nil, fmt.Errorf("append: dedup: %w", err)
		}
		if dup != 0 {
			return 0, nil, sqlstore.DuplicateError(dup)
		}
	}
	return seq, nil, nil
}

// qDuplicate finds the latest seq among the seat's messages with this hash that were posted
// after $4 (when not null) or are among its last $5 (when $5 > 0), or 0. For the last N, the
// index on (room, seat, hash, seq) finds the seat's latest message with this hash (almost
// always none), and only then does the (room, seat, seq) index count, at most N entries, the
// seat's messages after it: if fewer than N, it is among the last N.
const qDuplicate = `SELECT greatest(
	(SELECT max(seq) FROM messages
		WHERE $4::timestamptz IS NOT NULL AND room = $1 AND seat = $2 AND hash = $3 AND time > $4),
	(SELECT h.s FROM (SELECT max(seq) AS s FROM messages WHERE room = $1 AND seat = $2 AND hash = $3) h
		WHERE $5 > 0 AND h.s IS NOT NULL AND (SELECT count(*) FROM (
			SELECT 1 FROM messages WHERE room = $1 AND seat = $2 AND seq > h.s LIMIT $5) after) < $5),
	0)`

// wantDuplicate reports whether there is anything to check for a repeat.
func wantDuplicate(hash []byte, since time.Time, n int) bool {
	return len(hash) > 0 && (!since.IsZero() || n > 0)
}

func duplicateArgs(room, seat string, hash []byte, since time.Time, n int) []any {
	var sinceArg *time.Time
	if !since.IsZero() {
		sinceArg = &since
	}
	return []any{room, seat, hash, sinceArg, int64(max(n, 0))}
}

// Duplicate returns the seq of the seat's latest earlier message with this hash after since
// or among its last n messages, or 0.
func (s *Store) Duplicate(ctx context.Context, room, seat string, hash []byte, since time.Time, n int) (int64, error) {
	if !wantDuplicate(hash, since, n) {
		return 0, nil
	}
	var seq int64
	if err := s.pool.QueryRow(ctx, qDuplicate, duplicateArgs(room, seat, hash, since, n)...).Scan(&seq); err != nil {
		return 0, fmt.Errorf("duplicate: %w", err)
	}
	return seq, nil
}

// Watch returns a channel that receives the room's new last seq after appends by any process
// on this database, until ctx ends or the Store closes.
func (s *Store) Watch(ctx context.Context, room string) <-chan int64 {
	return s.watch.Subscribe(ctx, room)
}

// WatchSeats returns a channel that receives a SeatChange after every revocation or rotation
// by any process on the database, until ctx ends or the Store closes.
func (s *Store) WatchSeats(ctx context.Context) <-chan parley.SeatChange {
	return s.seats.Subscribe(ctx)
}

// The core's names under this package's earlier ones, for code written against them.
const (
	messageColumns = sqlstore.MessageColumns
	askColumns     = sqlstore.AskColumns
	qByKey         = sqlstore.QueryByKey
)

func scanMessage(row pgx.Row) (*parley.Message, error) { return sqlstore.ScanMessage(row) }

func roomNotFound(room string) error { return sqlstore.RoomNotFound(room) }

func collectMessages(rows pgx.Rows) ([]*parley.Message, error) {
	return collect(rows, func(row pgx.CollectableRow) (*parley.Message, error) { return sqlstore.ScanMessage(row) })
}

func collectAsks(rows pgx.Rows) ([]*parley.Ask, error) {
	return collect(rows, func(row pgx.CollectableRow) (*parley.Ask, error) { return sqlstore.ScanAsk(row) })
}

// collect is pgx.CollectRows, but returns nil rather than an empty slice for no rows, as the
// SQLite store does, so that the edges encode an empty list alike whichever store serves them.
func collect[T any](rows pgx.Rows, fn pgx.RowToFunc[T]) ([]T, error) {
	return pgx.AppendRows([]T(nil), rows, fn)
}

// ImportRoom writes a whole room in one transaction (see parley.Store).
func (s *Store) ImportRoom(ctx context.Context, a *parley.RoomArchive) error {
	return pgDB{s.pool}.Tx(ctx, func(tx sqlstore.DB) error {
		return sqlstore.ImportRoom(ctx, tx, dialect{}, a)
	})
}
