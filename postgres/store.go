package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

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
// and its commit (group.go), each decided as if it ran alone: one holder of the room's lock and one
// WAL flush for all of them, instead of one after the other.
func (s *Store) Append(ctx context.Context, a *parley.Append) (parley.Appended, error) {
	// Announced until its op is queued (group), so that a batch of the room held for it does
	// not begin in between (commitwait.go); the room service withdraws its own just before.
	queued := false
	if a.Message != nil {
		room := a.Message.Room
		s.PostsComing(room, 1)
		defer func() {
			if !queued {
				s.PostsComing(room, -1)
			}
		}()
	}
	m, err := sqlstore.Prepare(a)
	if err != nil {
		return parley.Appended{}, err
	}
	return s.group(ctx, a, m, &queued)
}

// Duplicate returns the seq of the seat's latest earlier message with this hash after since
// or among its last n messages, or 0.
func (s *Store) Duplicate(ctx context.Context, room, seat string, hash []byte, since time.Time, n int) (int64, error) {
	if !wantDuplicate(hash, since, n) {
		return 0, nil
	}
	var d dupCheck
	if err := s.pool.QueryRow(ctx, qCheck, duplicateArgs(room, seat, hash, since, n)...).Scan(&d.window, &d.latest, &d.after); err != nil {
		return 0, fmt.Errorf("duplicate: %w", err)
	}
	return d.seq(n, 0), nil
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

func roomNotFound(room string) error { return sqlstore.RoomNotFound(room) }

// ImportRoom writes a whole room in one transaction (see parley.Store).
func (s *Store) ImportRoom(ctx context.Context, a *parley.RoomArchive) error {
	return pgDB{s.pool}.Tx(ctx, func(tx sqlstore.DB) error {
		return sqlstore.ImportRoom(ctx, tx, dialect{}, a)
	})
}

// qAddStat is sqlstore.QueryAddStat committed without waiting for the WAL flush: the
// service buffers counters in memory for a second and accepts losing them in a crash, so
// waiting for the disk would add nothing but an fsync per counter, in the middle of the
// appends' group commits. A later commit that waits for the flush (any append) makes it
// durable too, since the WAL is written in order.
const qAddStat = `INSERT INTO stats (room, seat, key, value)
	SELECT $1, $2, $3, $4 FROM (SELECT set_config('synchronous_commit', 'off', true)) async
	ON CONFLICT (room, seat, key) DO UPDATE SET value = stats.value + excluded.value`

// AddStat adds delta to a per-room, per-seat counter. ENOTFOUND for the room.
func (s *Store) AddStat(ctx context.Context, room, seat, key string, delta int64) error {
	_, err := s.pool.Exec(ctx, qAddStat, room, seat, key, delta)
	return sqlstore.StatError(room, dialect{}, err)
}

var _ parley.StatsAdder = (*Store)(nil)

// qAddStats is qAddStat for many counters ($1 rooms, $2 seats, $3 keys, $4 deltas), written in
// the order given; AddStats sorts them, so that two processes flushing the same counters lock
// their rows in one order and cannot deadlock.
const qAddStats = `INSERT INTO stats (room, seat, key, value)
	SELECT u.room, u.seat, u.key, u.delta
	FROM (SELECT set_config('synchronous_commit', 'off', true)) async,
		unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) WITH ORDINALITY AS u(room, seat, key, delta, i)
	ORDER BY u.i
	ON CONFLICT (room, seat, key) DO UPDATE SET value = stats.value + excluded.value`

// AddStats implements parley.StatsAdder: every delta in one statement, all or none.
func (s *Store) AddStats(ctx context.Context, deltas []parley.StatDelta) error {
	if len(deltas) == 0 {
		return nil
	}
	deltas = slices.Clone(deltas)
	slices.SortFunc(deltas, func(a, b parley.StatDelta) int {
		return cmp.Or(strings.Compare(a.Room, b.Room), strings.Compare(a.Seat, b.Seat), strings.Compare(a.Key, b.Key))
	})
	rooms, seats, keys := make([]string, len(deltas)), make([]string, len(deltas)), make([]string, len(deltas))
	values := make([]int64, len(deltas))
	for i, d := range deltas {
		rooms[i], seats[i], keys[i], values[i] = d.Room, d.Seat, d.Key, d.Delta
	}
	if _, err := s.pool.Exec(ctx, qAddStats, rooms, seats, keys, values); err != nil {
		if sqlState(err) == foreignKeyViolation {
			return parley.Errorf(parley.ENOTFOUND, "a room of these counters does not exist")
		}
		return fmt.Errorf("add stats: %w", err)
	}
	return nil
}
