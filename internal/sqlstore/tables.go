package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/parleyhq/parley"
)

// Tables implements the parley.Store methods whose SQL is the same on both stores. A store
// embeds it (New) and overrides what it does otherwise: SQLite publishes seat changes after
// RevokeSeat and SetSeatToken and runs AddStat through its committer, PostgreSQL notifies in
// the statement itself.
type Tables struct {
	read, write DB
	d           Dialect
}

// New returns the Tables of a store: reads go to read, writes to write (the same DB where the
// store has one pool).
func New(read, write DB, d Dialect) Tables { return Tables{read: read, write: write, d: d} }

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// queryAll runs a query and scans each row with scan; no rows is a nil slice, so that the
// edges encode an empty list alike whichever store serves them.
func queryAll[T any](ctx context.Context, db DB, scan func(Row) (T, error), query string, args ...any) ([]T, error) {
	var out []T
	err := db.Query(ctx, query, args, func(r Row) error {
		v, err := scan(r)
		if err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// CreateRoom stores a new room. ECONFLICT if the name is taken.
func (t Tables) CreateRoom(ctx context.Context, r *parley.Room) error {
	policy, err := json.Marshal(r.Policy)
	if err != nil {
		return fmt.Errorf("create room: %w", err)
	}
	_, err = t.write.Exec(ctx, `INSERT INTO rooms (name, policy, created_at) VALUES ($1, $2, $3)`,
		r.Name, string(policy), t.d.Time(r.CreatedAt))
	switch {
	case t.d.Unique(err):
		return parley.Errorf(parley.ECONFLICT, "room %q already exists", r.Name)
	case err != nil:
		return fmt.Errorf("create room: %w", err)
	}
	return nil
}

// Room returns one room. ENOTFOUND.
func (t Tables) Room(ctx context.Context, name string) (*parley.Room, error) {
	r, err := ScanRoom(t.read.QueryRow(ctx, `SELECT `+RoomColumns+` FROM rooms WHERE name = $1`, name))
	if isNoRows(err) {
		return nil, RoomNotFound(name)
	}
	if err != nil {
		return nil, fmt.Errorf("room: %w", err)
	}
	return r, nil
}

// Rooms lists every room by name.
func (t Tables) Rooms(ctx context.Context) ([]*parley.Room, error) {
	rooms, err := queryAll(ctx, t.read, ScanRoom, `SELECT `+RoomColumns+` FROM rooms ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("rooms: %w", err)
	}
	return rooms, nil
}

// UpdatePolicy replaces a room's policy. ENOTFOUND.
func (t Tables) UpdatePolicy(ctx context.Context, room string, p parley.Policy) error {
	policy, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("update policy: %w", err)
	}
	n, err := t.write.Exec(ctx, `UPDATE rooms SET policy = $1 WHERE name = $2`, string(policy), room)
	if err != nil {
		return fmt.Errorf("update policy: %w", err)
	}
	if n == 0 {
		return RoomNotFound(room)
	}
	return nil
}

// CreateSeat stores a new seat. ENOTFOUND for the room; ECONFLICT if the name is taken.
func (t Tables) CreateSeat(ctx context.Context, st *parley.Seat) error {
	var revoked any
	if st.RevokedAt != nil {
		revoked = NullTime(t.d, *st.RevokedAt)
	}
	_, err := t.write.Exec(ctx, `INSERT INTO seats (room, name, role, token_hash, created_at, revoked_at)
		VALUES ($1, $2, $3, $4, $5, $6)`,
		st.Room, st.Name, string(st.Role), NullBytes(st.TokenHash), t.d.Time(st.CreatedAt), revoked)
	switch {
	case t.d.ForeignKey(err):
		return RoomNotFound(st.Room)
	case t.d.Unique(err):
		// The name or, against all odds, the token hash: tell which without parsing messages.
		if _, serr := t.Seat(ctx, st.Room, st.Name); serr == nil {
			return parley.Errorf(parley.ECONFLICT, "seat %q already exists in room %q", st.Name, st.Room)
		}
		return TokenTaken()
	case err != nil:
		return fmt.Errorf("create seat: %w", err)
	}
	return nil
}

// Seat returns one seat, revoked or not. ENOTFOUND.
func (t Tables) Seat(ctx context.Context, room, name string) (*parley.Seat, error) {
	st, err := ScanSeat(t.read.QueryRow(ctx,
		`SELECT `+SeatColumns+` FROM seats WHERE room = $1 AND name = $2`, room, name))
	if isNoRows(err) {
		return nil, SeatNotFound(room, name)
	}
	if err != nil {
		return nil, fmt.Errorf("seat: %w", err)
	}
	return st, nil
}

// SeatByToken returns the seat whose token hashes to hash, revoked or not. ENOTFOUND.
func (t Tables) SeatByToken(ctx context.Context, hash []byte) (*parley.Seat, error) {
	if len(hash) == 0 {
		return nil, NoSuchToken()
	}
	st, err := ScanSeat(t.read.QueryRow(ctx, `SELECT `+SeatColumns+` FROM seats WHERE token_hash = $1`, hash))
	if isNoRows(err) {
		return nil, NoSuchToken()
	}
	if err != nil {
		return nil, fmt.Errorf("seat by token: %w", err)
	}
	return st, nil
}

// Seats lists a room's seats by name, revoked ones included.
func (t Tables) Seats(ctx context.Context, room string) ([]*parley.Seat, error) {
	seats, err := queryAll(ctx, t.read, ScanSeat, `SELECT `+SeatColumns+` FROM seats WHERE room = $1 ORDER BY name`, room)
	if err != nil {
		return nil, fmt.Errorf("seats: %w", err)
	}
	return seats, nil
}

// RevokeSeat marks a seat revoked at at. ENOTFOUND.
func (t Tables) RevokeSeat(ctx context.Context, room, name string, at time.Time) error {
	n, err := t.write.Exec(ctx, `UPDATE seats SET revoked_at = $1 WHERE room = $2 AND name = $3`,
		t.d.Time(at), room, name)
	if err != nil {
		return fmt.Errorf("revoke seat: %w", err)
	}
	if n == 0 {
		return SeatNotFound(room, name)
	}
	return nil
}

// SetSeatToken replaces a seat's token hash. ENOTFOUND.
func (t Tables) SetSeatToken(ctx context.Context, room, name string, hash []byte) error {
	n, err := t.write.Exec(ctx, `UPDATE seats SET token_hash = $1 WHERE room = $2 AND name = $3`,
		NullBytes(hash), room, name)
	switch {
	case t.d.Unique(err):
		return TokenTaken()
	case err != nil:
		return fmt.Errorf("set seat token: %w", err)
	case n == 0:
		return SeatNotFound(room, name)
	}
	return nil
}

// The reads of messages; QueryByKey is also Append's idempotency check.
const (
	QueryByKey       = `SELECT ` + MessageColumns + ` FROM messages WHERE room = $1 AND seat = $2 AND idempotency_key = $3`
	queryMessages    = `SELECT ` + MessageColumns + ` FROM messages WHERE room = $1 AND seq > $2 ORDER BY seq`
	queryMessagesLim = queryMessages + ` LIMIT $3`
)

// Messages returns the room's messages with seq > after, in seq order, at most limit (limit
// <= 0: all).
func (t Tables) Messages(ctx context.Context, room string, after int64, limit int) ([]*parley.Message, error) {
	var (
		msgs []*parley.Message
		err  error
	)
	if limit > 0 {
		msgs, err = queryAll(ctx, t.read, ScanMessage, queryMessagesLim, room, after, limit)
	} else {
		msgs, err = queryAll(ctx, t.read, ScanMessage, queryMessages, room, after)
	}
	if err != nil {
		return nil, fmt.Errorf("messages: %w", err)
	}
	return msgs, nil
}

// Message returns one message. ENOTFOUND.
func (t Tables) Message(ctx context.Context, room string, seq int64) (*parley.Message, error) {
	m, err := ScanMessage(t.read.QueryRow(ctx, `SELECT `+MessageColumns+` FROM messages
		WHERE room = $1 AND seq = $2`, room, seq))
	if isNoRows(err) {
		return nil, MessageNotFound(room, seq)
	}
	if err != nil {
		return nil, fmt.Errorf("message: %w", err)
	}
	return m, nil
}

// LastSeq returns the room's highest seq, 0 when empty. ENOTFOUND for the room.
func (t Tables) LastSeq(ctx context.Context, room string) (int64, error) {
	var last int64
	err := t.read.QueryRow(ctx, `SELECT last_seq FROM rooms WHERE name = $1`, room).Scan(&last)
	if isNoRows(err) {
		return 0, RoomNotFound(room)
	}
	if err != nil {
		return 0, fmt.Errorf("last seq: %w", err)
	}
	return last, nil
}

// ByIdempotencyKey returns the message a seat posted with key. ENOTFOUND.
func (t Tables) ByIdempotencyKey(ctx context.Context, room, seat, key string) (*parley.Message, error) {
	m, err := ScanMessage(t.read.QueryRow(ctx, QueryByKey, room, seat, key))
	if isNoRows(err) {
		return nil, parley.Errorf(parley.ENOTFOUND, "no message of seat %q with this Idempotency-Key", seat)
	}
	if err != nil {
		return nil, fmt.Errorf("by idempotency key: %w", err)
	}
	return m, nil
}

// Asks returns the room's asks in the given state ("" for all), by seq and line.
func (t Tables) Asks(ctx context.Context, room, state string) ([]*parley.Ask, error) {
	asks, err := queryAll(ctx, t.read, ScanAsk, `SELECT `+AskColumns+` FROM asks
		WHERE room = $1 AND ($2 = '' OR state = $2) ORDER BY seq, line`, room, state)
	if err != nil {
		return nil, fmt.Errorf("asks: %w", err)
	}
	return asks, nil
}

// The topic reads run on the indexes messages_topic and asks_topic (SQLite migration 0002,
// PostgreSQL 0003), so their cost is the topic's, not the room's; each store's
// TestTopicQueryPlan holds them to it.
const (
	queryTopicMessages = `SELECT ` + MessageColumns + ` FROM messages WHERE room = $1 AND topic = $2 AND seq > $3 ORDER BY seq`
	// QueryTopicMessagesLim and QueryTopicAsks are exported for the stores' query-plan tests.
	QueryTopicMessagesLim = queryTopicMessages + ` LIMIT $4`
	QueryTopicAsks        = `SELECT ` + AskColumns + ` FROM asks WHERE room = $1 AND topic = $2 ORDER BY seq, line`
)

// TopicMessages is Messages for one topic ("" for the messages without one).
func (t Tables) TopicMessages(ctx context.Context, room, topic string, after int64, limit int) ([]*parley.Message, error) {
	var (
		msgs []*parley.Message
		err  error
	)
	if limit > 0 {
		msgs, err = queryAll(ctx, t.read, ScanMessage, QueryTopicMessagesLim, room, topic, after, limit)
	} else {
		msgs, err = queryAll(ctx, t.read, ScanMessage, queryTopicMessages, room, topic, after)
	}
	if err != nil {
		return nil, fmt.Errorf("topic messages: %w", err)
	}
	return msgs, nil
}

// TopicAsks returns the asks of one topic in every state, by seq and line.
func (t Tables) TopicAsks(ctx context.Context, room, topic string) ([]*parley.Ask, error) {
	asks, err := queryAll(ctx, t.read, ScanAsk, QueryTopicAsks, room, topic)
	if err != nil {
		return nil, fmt.Errorf("topic asks: %w", err)
	}
	return asks, nil
}

// DueAsks returns open asks, in every room, whose Due is set and not after at, earliest first.
func (t Tables) DueAsks(ctx context.Context, at time.Time) ([]*parley.Ask, error) {
	asks, err := queryAll(ctx, t.read, ScanAsk, `SELECT `+AskColumns+` FROM asks
		WHERE state = 'open' AND due IS NOT NULL AND due <= $1 ORDER BY due, room, seq, line`, t.d.Time(at))
	if err != nil {
		return nil, fmt.Errorf("due asks: %w", err)
	}
	return asks, nil
}

// NextDue returns the earliest Due of any open ask, or the zero time.
func (t Tables) NextDue(ctx context.Context) (time.Time, error) {
	var due timeCol
	if err := t.read.QueryRow(ctx,
		`SELECT min(due) FROM asks WHERE state = 'open' AND due IS NOT NULL`).Scan(&due); err != nil {
		return time.Time{}, fmt.Errorf("next due: %w", err)
	}
	return due.t, nil
}

// CreateRun stores a run record. ENOTFOUND for the room; ECONFLICT if the id exists.
func (t Tables) CreateRun(ctx context.Context, r *parley.Run) error {
	_, err := t.write.Exec(ctx, `INSERT INTO runs (`+RunColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		r.Room, r.ID, r.Commit, r.Passed, r.Failed, r.Seat, t.d.Time(r.Time))
	switch {
	case t.d.ForeignKey(err):
		return RoomNotFound(r.Room)
	case t.d.Unique(err):
		return parley.Errorf(parley.ECONFLICT, "run %q already exists in room %q", r.ID, r.Room)
	case err != nil:
		return fmt.Errorf("create run: %w", err)
	}
	return nil
}

// Run returns one run. ENOTFOUND.
func (t Tables) Run(ctx context.Context, room, id string) (*parley.Run, error) {
	r, err := ScanRun(t.read.QueryRow(ctx, `SELECT `+RunColumns+` FROM runs WHERE room = $1 AND id = $2`, room, id))
	if isNoRows(err) {
		return nil, RunNotFound(room, id)
	}
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	return r, nil
}

// QueryAddStat adds $4 to a counter, creating it at $4.
const QueryAddStat = `INSERT INTO stats (room, seat, key, value) VALUES ($1, $2, $3, $4)
	ON CONFLICT (room, seat, key) DO UPDATE SET value = stats.value + excluded.value`

// AddStat adds delta to a per-room, per-seat counter. ENOTFOUND for the room.
func (t Tables) AddStat(ctx context.Context, room, seat, key string, delta int64) error {
	_, err := t.write.Exec(ctx, QueryAddStat, room, seat, key, delta)
	return StatError(room, t.d, err)
}

// StatError is the error of AddStat, given the statement's.
func StatError(room string, d Dialect, err error) error {
	switch {
	case d.ForeignKey(err):
		return RoomNotFound(room)
	case err != nil:
		return fmt.Errorf("add stat: %w", err)
	}
	return nil
}

// Stats returns every counter of a room as seat -> key -> value.
func (t Tables) Stats(ctx context.Context, room string) (map[string]map[string]int64, error) {
	stats := map[string]map[string]int64{}
	err := t.read.Query(ctx, `SELECT seat, key, value FROM stats WHERE room = $1`, []any{room}, func(r Row) error {
		var (
			seat, key string
			v         int64
		)
		if err := r.Scan(&seat, &key, &v); err != nil {
			return err
		}
		if stats[seat] == nil {
			stats[seat] = map[string]int64{}
		}
		stats[seat][key] = v
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("stats: %w", err)
	}
	return stats, nil
}

// RunSearch runs a store's full-text query (its own SQL: FTS5 on SQLite, tsquery on
// PostgreSQL) that selects MessageColumns in rank order, and returns the messages.
func (t Tables) RunSearch(ctx context.Context, query string, args ...any) ([]*parley.Message, error) {
	msgs, err := queryAll(ctx, t.read, ScanMessage, query, args...)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	return msgs, nil
}
