package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/parleyhq/parley"
)

// CreateRoom stores a new room. ECONFLICT if the name is taken.
func (s *Store) CreateRoom(ctx context.Context, r *parley.Room) error {
	policy, err := json.Marshal(r.Policy)
	if err != nil {
		return fmt.Errorf("create room: %w", err)
	}
	_, err = s.w.exec(ctx, `INSERT INTO rooms (name, policy, created_at) VALUES (?, ?, ?)`,
		r.Name, string(policy), toMicros(r.CreatedAt))
	if isUnique(err) {
		return parley.Errorf(parley.ECONFLICT, "room %q already exists", r.Name).
			WithHint("choose another name")
	}
	if err != nil {
		return fmt.Errorf("create room: %w", err)
	}
	return nil
}

const roomColumns = `name, policy, created_at`

func scanRoom(row interface{ Scan(...any) error }) (*parley.Room, error) {
	var (
		r      parley.Room
		policy string
		at     int64
	)
	if err := row.Scan(&r.Name, &policy, &at); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(policy), &r.Policy); err != nil {
		return nil, fmt.Errorf("room %q policy: %w", r.Name, err)
	}
	r.CreatedAt = fromMicros(at)
	return &r, nil
}

// Room returns one room. ENOTFOUND.
func (s *Store) Room(ctx context.Context, name string) (*parley.Room, error) {
	r, err := scanRoom(s.r.queryRow(ctx, `SELECT `+roomColumns+` FROM rooms WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, roomNotFound(name)
	}
	if err != nil {
		return nil, fmt.Errorf("room: %w", err)
	}
	return r, nil
}

// Rooms lists every room by name.
func (s *Store) Rooms(ctx context.Context) ([]*parley.Room, error) {
	rows, err := s.r.query(ctx, `SELECT `+roomColumns+` FROM rooms ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("rooms: %w", err)
	}
	defer rows.Close()
	var rooms []*parley.Room
	for rows.Next() {
		r, err := scanRoom(rows)
		if err != nil {
			return nil, fmt.Errorf("rooms: %w", err)
		}
		rooms = append(rooms, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("rooms: %w", err)
	}
	return rooms, nil
}

// UpdatePolicy replaces a room's policy. ENOTFOUND.
func (s *Store) UpdatePolicy(ctx context.Context, room string, p parley.Policy) error {
	policy, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("update policy: %w", err)
	}
	res, err := s.w.exec(ctx, `UPDATE rooms SET policy = ? WHERE name = ?`, string(policy), room)
	if err != nil {
		return fmt.Errorf("update policy: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("update policy: %w", err)
	} else if n == 0 {
		return roomNotFound(room)
	}
	return nil
}

// nullBytes stores an empty hash as NULL, so that seats without a token never collide on the
// unique token index.
func nullBytes(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

// CreateSeat stores a new seat. ENOTFOUND for the room; ECONFLICT if the name is taken.
func (s *Store) CreateSeat(ctx context.Context, st *parley.Seat) error {
	var revoked sql.NullInt64
	if st.RevokedAt != nil {
		revoked = nullMicros(*st.RevokedAt)
	}
	_, err := s.w.exec(ctx, `INSERT INTO seats (room, name, role, token_hash, created_at, revoked_at)
		VALUES (?, ?, ?, ?, ?, ?)`,
		st.Room, st.Name, string(st.Role), nullBytes(st.TokenHash), toMicros(st.CreatedAt), revoked)
	switch {
	case isForeignKey(err):
		return roomNotFound(st.Room)
	case isUnique(err):
		// The name or, against all odds, the token hash: tell which without parsing messages.
		if _, serr := s.Seat(ctx, st.Room, st.Name); serr == nil {
			return parley.Errorf(parley.ECONFLICT, "seat %q already exists in room %q", st.Name, st.Room).
				WithHint("revoked seats keep their name; choose another")
		}
		return parley.Errorf(parley.ECONFLICT, "token already belongs to another seat")
	case err != nil:
		return fmt.Errorf("create seat: %w", err)
	}
	return nil
}

const seatColumns = `room, name, role, token_hash, created_at, revoked_at`

func scanSeat(row interface{ Scan(...any) error }) (*parley.Seat, error) {
	var (
		st      parley.Seat
		role    string
		at      int64
		revoked sql.NullInt64
	)
	if err := row.Scan(&st.Room, &st.Name, &role, &st.TokenHash, &at, &revoked); err != nil {
		return nil, err
	}
	st.Role = parley.Role(role)
	st.CreatedAt = fromMicros(at)
	if revoked.Valid {
		t := fromMicros(revoked.Int64)
		st.RevokedAt = &t
	}
	return &st, nil
}

func seatNotFound(room, name string) error {
	return parley.Errorf(parley.ENOTFOUND, "seat %q not found in room %q", name, room)
}

// Seat returns one seat, revoked or not. ENOTFOUND.
func (s *Store) Seat(ctx context.Context, room, name string) (*parley.Seat, error) {
	st, err := scanSeat(s.r.queryRow(ctx,
		`SELECT `+seatColumns+` FROM seats WHERE room = ? AND name = ?`, room, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, seatNotFound(room, name)
	}
	if err != nil {
		return nil, fmt.Errorf("seat: %w", err)
	}
	return st, nil
}

// SeatByToken returns the seat whose token hashes to hash, revoked or not. ENOTFOUND.
func (s *Store) SeatByToken(ctx context.Context, hash []byte) (*parley.Seat, error) {
	if len(hash) == 0 {
		return nil, parley.Errorf(parley.ENOTFOUND, "no seat has this token")
	}
	st, err := scanSeat(s.r.queryRow(ctx,
		`SELECT `+seatColumns+` FROM seats WHERE token_hash = ?`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, parley.Errorf(parley.ENOTFOUND, "no seat has this token")
	}
	if err != nil {
		return nil, fmt.Errorf("seat by token: %w", err)
	}
	return st, nil
}

// Seats lists a room's seats by name, revoked ones included.
func (s *Store) Seats(ctx context.Context, room string) ([]*parley.Seat, error) {
	rows, err := s.r.query(ctx, `SELECT `+seatColumns+` FROM seats WHERE room = ? ORDER BY name`, room)
	if err != nil {
		return nil, fmt.Errorf("seats: %w", err)
	}
	defer rows.Close()
	var seats []*parley.Seat
	for rows.Next() {
		st, err := scanSeat(rows)
		if err != nil {
			return nil, fmt.Errorf("seats: %w", err)
		}
		seats = append(seats, st)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("seats: %w", err)
	}
	return seats, nil
}

// RevokeSeat marks a seat revoked at t. ENOTFOUND.
func (s *Store) RevokeSeat(ctx context.Context, room, name string, t time.Time) error {
	res, err := s.w.exec(ctx, `UPDATE seats SET revoked_at = ? WHERE room = ? AND name = ?`,
		toMicros(t), room, name)
	if err != nil {
		return fmt.Errorf("revoke seat: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("revoke seat: %w", err)
	} else if n == 0 {
		return seatNotFound(room, name)
	}
	s.seats.Publish(parley.SeatChange{Room: room, Seat: name})
	return nil
}

// SetSeatToken replaces a seat's token hash. ENOTFOUND.
func (s *Store) SetSeatToken(ctx context.Context, room, name string, hash []byte) error {
	res, err := s.w.exec(ctx, `UPDATE seats SET token_hash = ? WHERE room = ? AND name = ?`,
		nullBytes(hash), room, name)
	if isUnique(err) {
		return parley.Errorf(parley.ECONFLICT, "token already belongs to another seat")
	}
	if err != nil {
		return fmt.Errorf("set seat token: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("set seat token: %w", err)
	} else if n == 0 {
		return seatNotFound(room, name)
	}
	s.seats.Publish(parley.SeatChange{Room: room, Seat: name})
	return nil
}

// The statements of Append, prepared by Open.
const (
	// Takes the room's next seq. A write that then fails (a replay, a duplicate) is rolled
	// back to its savepoint, the seq with it.
	qNextSeq = `UPDATE rooms SET last_seq = last_seq + 1 WHERE name = ? RETURNING last_seq`
	qByKey   = `SELECT ` + messageColumns + ` FROM messages WHERE room = ? AND seat = ? AND idempotency_key = ?`
	qLapse   = `UPDATE asks SET state = ?, closed_by = ? WHERE room = ? AND seq = ? AND line = ? AND state = ?`
	qAnswer  = `UPDATE asks SET state = ?, closed_by = ?
		WHERE room = ? AND seq = ? AND state = ? AND (to_seat = ? OR to_seat = 'all')`
	qInsertMessage = `INSERT INTO messages
		(room, seq, seat, time, format, topic, intent, re, body, tokens, hash, notes, idempotency_key)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	qInsertAsk = `INSERT INTO asks (room, seq, line, from_seat, to_seat, topic, text, due, dflt, decider, state)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
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
	qAddStat = `INSERT INTO stats (room, seat, key, value) VALUES (?, ?, ?, ?)
		ON CONFLICT (room, seat, key) DO UPDATE SET value = value + excluded.value`
)

var appendQueries = []string{qNextSeq, qByKey, qLapse, qAnswer, qInsertMessage, qInsertAsk, qDup, qAddStat, qSavepoint, qRollbackTo, qRelease}

// Append stores a post and updates asks in one transaction, shared with the other writes
// waiting at the same moment (see group.go), each in its own savepoint.
func (s *Store) Append(ctx context.Context, a *parley.Append) (*parley.Message, error) {
	if a == nil || a.Message == nil {
		return nil, fmt.Errorf("append: no message")
	}
	m := *a.Message
	m.Time = m.Time.UTC().Truncate(time.Microsecond)
	m.Seq = 0
	if a.Lapses != nil && a.Lapses.Room != "" && a.Lapses.Room != m.Room {
		return nil, fmt.Errorf("append: lapses an ask of room %q in room %q", a.Lapses.Room, m.Room)
	}

	var out *parley.Message
	err := s.inTx(ctx, func(ctx context.Context, t txStmts) error {
		var err error
		out, err = appendTx(ctx, t, a, m)
		return err
	})
	switch {
	case errors.Is(err, parley.ErrReplay):
		return out, err
	case err != nil:
		return nil, err
	}
	s.watch.Publish(out.Room, out.Seq)
	return out, nil
}

// appendTx is Append inside its (shared) transaction, after which the caller publishes. The
// transaction holds SQLite's write lock from its start (BEGIN IMMEDIATE), so the seq it takes
// from rooms.last_seq cannot be taken by anyone else; a write that fails after taking it is
// rolled back to its savepoint (group.go), and the seq with it, so seqs stay gapless.
func appendTx(ctx context.Context, t txStmts, a *parley.Append, m parley.Message) (*parley.Message, error) {
	var seq int64
	err := t.queryRow(ctx, qNextSeq, m.Room).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, roomNotFound(m.Room)
	}
	if err != nil {
		return nil, fmt.Errorf("append: %w", err)
	}

	if m.IdempotencyKey != "" {
		orig, err := scanMessage(t.queryRow(ctx, qByKey, m.Room, m.Seat, m.IdempotencyKey))
		switch {
		case err == nil:
			return orig, parley.ErrReplay
		case !errors.Is(err, sql.ErrNoRows):
			return nil, fmt.Errorf("append: idempotency key: %w", err)
		}
	}

	if orig, err := duplicate(ctx, t, m.Room, m.Seat, m.Hash, a.DedupSince, a.DedupLast); err != nil {
		return nil, fmt.Errorf("append: dedup: %w", err)
	} else if orig != 0 {
		return nil, duplicateError(orig)
	}

	if a.Lapses != nil {
		res, err := t.exec(ctx, qLapse,
			parley.AskLapsed, seq, m.Room, a.Lapses.Seq, a.Lapses.Line, parley.AskOpen)
		if err != nil {
			return nil, fmt.Errorf("append: lapse ask: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return nil, fmt.Errorf("append: lapse ask: %w", err)
		} else if n == 0 {
			return nil, parley.Errorf(parley.ECONFLICT, "ask #%d line %d is no longer open", a.Lapses.Seq, a.Lapses.Line)
		}
	}

	notes, err := marshalNotes(m.Notes)
	if err != nil {
		return nil, fmt.Errorf("append: %w", err)
	}
	var key any
	if m.IdempotencyKey != "" {
		key = m.IdempotencyKey
	}
	if _, err := t.exec(ctx, qInsertMessage,
		m.Room, seq, m.Seat, toMicros(m.Time), m.Format, m.Topic, m.Intent, m.Re, []byte(m.Body),
		m.Tokens, nullBytes(m.Hash), notes, key); err != nil {
		return nil, fmt.Errorf("append: insert message: %w", err)
	}

	for _, ask := range a.Asks {
		ask.Room, ask.Seq, ask.State, ask.ClosedBy = m.Room, seq, parley.AskOpen, 0
		if ask.From == "" {
			ask.From = m.Seat
		}
		if _, err := t.exec(ctx, qInsertAsk,
			ask.Room, ask.Seq, ask.Line, ask.From, ask.To, ask.Topic, ask.Text, nullMicrosPtr(ask.Due),
			ask.Default, ask.Decider, ask.State); err != nil {
			if isUnique(err) {
				return nil, parley.Errorf(parley.EINVALID, "two asks on line %d", ask.Line)
			}
			return nil, fmt.Errorf("append: insert ask: %w", err)
		}
	}

	for _, answered := range a.Answers {
		if _, err := t.exec(ctx, qAnswer,
			parley.AskAnswered, seq, m.Room, answered, parley.AskOpen, m.Seat); err != nil {
			return nil, fmt.Errorf("append: answer asks of #%d: %w", answered, err)
		}
	}

	m.Seq = seq
	if len(m.Notes) == 0 {
		m.Notes = nil
	}
	if len(m.Hash) == 0 {
		m.Hash = nil
	}
	return &m, nil
}

func duplicateError(orig int64) error {
	return parley.Errorf(parley.ECONFLICT, "this repeats your message #%d", orig).
		WithHint("say what is new, or refer to #%d with re %d", orig, orig).
		With("seq", orig)
}

func marshalNotes(notes []string) (string, error) {
	if len(notes) == 0 {
		return "[]", nil
	}
	b, err := json.Marshal(notes)
	if err != nil {
		return "", fmt.Errorf("notes: %w", err)
	}
	return string(b), nil
}

// querier is what both stmtCache and txStmts offer.
type querier interface {
	queryRow(ctx context.Context, query string, args ...any) *sql.Row
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
	if err := q.queryRow(ctx, qDup, room, seat, hash, window, max(n, 0)).Scan(&found); err != nil {
		return 0, err
	}
	return found, nil
}

const messageColumns = `room, seq, seat, time, format, topic, intent, re, body, tokens, hash, notes, idempotency_key`

func scanMessage(row interface{ Scan(...any) error }) (*parley.Message, error) {
	var (
		m     parley.Message
		at    int64
		notes string
		key   sql.NullString
	)
	if err := row.Scan(&m.Room, &m.Seq, &m.Seat, &at, &m.Format, &m.Topic, &m.Intent, &m.Re,
		&m.Body, &m.Tokens, &m.Hash, &notes, &key); err != nil {
		return nil, err
	}
	m.Time = fromMicros(at)
	m.IdempotencyKey = key.String
	if notes != "[]" && notes != "" {
		if err := json.Unmarshal([]byte(notes), &m.Notes); err != nil {
			return nil, fmt.Errorf("message #%d notes: %w", m.Seq, err)
		}
	}
	if len(m.Hash) == 0 {
		m.Hash = nil
	}
	return &m, nil
}

// Messages returns the room's messages with seq > after, in seq order, at most limit.
func (s *Store) Messages(ctx context.Context, room string, after int64, limit int) ([]*parley.Message, error) {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := s.r.query(ctx, `SELECT `+messageColumns+` FROM messages
		WHERE room = ? AND seq > ? ORDER BY seq LIMIT ?`, room, after, limit)
	if err != nil {
		return nil, fmt.Errorf("messages: %w", err)
	}
	defer rows.Close()
	var msgs []*parley.Message
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, fmt.Errorf("messages: %w", err)
		}
		msgs = append(msgs, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("messages: %w", err)
	}
	return msgs, nil
}

// Message returns one message. ENOTFOUND.
func (s *Store) Message(ctx context.Context, room string, seq int64) (*parley.Message, error) {
	m, err := scanMessage(s.r.queryRow(ctx, `SELECT `+messageColumns+` FROM messages
		WHERE room = ? AND seq = ?`, room, seq))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, parley.Errorf(parley.ENOTFOUND, "message #%d not found in room %q", seq, room)
	}
	if err != nil {
		return nil, fmt.Errorf("message: %w", err)
	}
	return m, nil
}

// LastSeq returns the room's highest seq, 0 when empty. ENOTFOUND for the room.
func (s *Store) LastSeq(ctx context.Context, room string) (int64, error) {
	var last int64
	err := s.r.queryRow(ctx, `SELECT last_seq FROM rooms WHERE name = ?`, room).Scan(&last)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, roomNotFound(room)
	}
	if err != nil {
		return 0, fmt.Errorf("last seq: %w", err)
	}
	return last, nil
}

// ByIdempotencyKey returns the message a seat posted with key. ENOTFOUND.
func (s *Store) ByIdempotencyKey(ctx context.Context, room, seat, key string) (*parley.Message, error) {
	m, err := scanMessage(s.r.queryRow(ctx, `SELECT `+messageColumns+` FROM messages
		WHERE room = ? AND seat = ? AND idempotency_key = ?`, room, seat, key))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, parley.Errorf(parley.ENOTFOUND, "no message of seat %q with this Idempotency-Key", seat)
	}
	if err != nil {
		return nil, fmt.Errorf("by idempotency key: %w", err)
	}
	return m, nil
}

// Duplicate returns the seq of the seat's latest earlier message with this hash after since
// or among its last n messages, or 0.
func (s *Store) Duplicate(ctx context.Context, room, seat string, hash []byte, since time.Time, n int) (int64, error) {
	seq, err := duplicate(ctx, s.r, room, seat, hash, since, n)
	if err != nil {
		return 0, fmt.Errorf("duplicate: %w", err)
	}
	return seq, nil
}

const askColumns = `room, seq, line, from_seat, to_seat, topic, text, due, dflt, decider, state, closed_by`

func scanAsks(rows *sql.Rows) ([]*parley.Ask, error) {
	defer rows.Close()
	var asks []*parley.Ask
	for rows.Next() {
		var (
			a   parley.Ask
			due sql.NullInt64
		)
		if err := rows.Scan(&a.Room, &a.Seq, &a.Line, &a.From, &a.To, &a.Topic, &a.Text, &due,
			&a.Default, &a.Decider, &a.State, &a.ClosedBy); err != nil {
			return nil, err
		}
		a.Due = fromNullMicrosPtr(due)
		asks = append(asks, &a)
	}
	return asks, rows.Err()
}

// Asks returns the room's asks in the given state ("" for all), by seq and line.
func (s *Store) Asks(ctx context.Context, room, state string) ([]*parley.Ask, error) {
	rows, err := s.r.query(ctx, `SELECT `+askColumns+` FROM asks
		WHERE room = ? AND (? = '' OR state = ?) ORDER BY seq, line`, room, state, state)
	if err != nil {
		return nil, fmt.Errorf("asks: %w", err)
	}
	asks, err := scanAsks(rows)
	if err != nil {
		return nil, fmt.Errorf("asks: %w", err)
	}
	return asks, nil
}

// DueAsks returns open asks, in every room, whose Due is set and not after t, earliest first.
func (s *Store) DueAsks(ctx context.Context, t time.Time) ([]*parley.Ask, error) {
	rows, err := s.r.query(ctx, `SELECT `+askColumns+` FROM asks
		WHERE state = 'open' AND due IS NOT NULL AND due <= ? ORDER BY due, room, seq, line`, toMicros(t))
	if err != nil {
		return nil, fmt.Errorf("due asks: %w", err)
	}
	asks, err := scanAsks(rows)
	if err != nil {
		return nil, fmt.Errorf("due asks: %w", err)
	}
	return asks, nil
}

// NextDue returns the earliest Due of any open ask, or the zero time.
func (s *Store) NextDue(ctx context.Context) (time.Time, error) {
	var due sql.NullInt64
	if err := s.r.queryRow(ctx,
		`SELECT min(due) FROM asks WHERE state = 'open' AND due IS NOT NULL`).Scan(&due); err != nil {
		return time.Time{}, fmt.Errorf("next due: %w", err)
	}
	return fromNullMicros(due), nil
}

// CreateRun stores a run record. ENOTFOUND for the room; ECONFLICT if the id exists.
func (s *Store) CreateRun(ctx context.Context, r *parley.Run) error {
	_, err := s.w.exec(ctx, `INSERT INTO runs (room, id, commit_sha, passed, failed, seat, time)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, r.Room, r.ID, r.Commit, r.Passed, r.Failed, r.Seat, toMicros(r.Time))
	switch {
	case isForeignKey(err):
		return roomNotFound(r.Room)
	case isUnique(err):
		return parley.Errorf(parley.ECONFLICT, "run %q already exists in room %q", r.ID, r.Room).
			WithHint("give each run its own id")
	case err != nil:
		return fmt.Errorf("create run: %w", err)
	}
	return nil
}

// Run returns one run. ENOTFOUND.
func (s *Store) Run(ctx context.Context, room, id string) (*parley.Run, error) {
	var (
		r  parley.Run
		at int64
	)
	err := s.r.queryRow(ctx, `SELECT room, id, commit_sha, passed, failed, seat, time
		FROM runs WHERE room = ? AND id = ?`, room, id).
		Scan(&r.Room, &r.ID, &r.Commit, &r.Passed, &r.Failed, &r.Seat, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, parley.Errorf(parley.ENOTFOUND, "run %q not found in room %q", id, room)
	}
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	r.Time = fromMicros(at)
	return &r, nil
}

// AddStat adds delta to a per-room, per-seat counter. ENOTFOUND for the room.
func (s *Store) AddStat(ctx context.Context, room, seat, key string, delta int64) error {
	// Through the committer: every post adds stats, and they share its fsyncs.
	err := s.inTx(ctx, func(ctx context.Context, t txStmts) error {
		_, err := t.exec(ctx, qAddStat, room, seat, key, delta)
		return err
	})
	if isForeignKey(err) {
		return roomNotFound(room)
	}
	if err != nil {
		return fmt.Errorf("add stat: %w", err)
	}
	return nil
}

// Stats returns every counter of a room as seat -> key -> value.
func (s *Store) Stats(ctx context.Context, room string) (map[string]map[string]int64, error) {
	rows, err := s.r.query(ctx, `SELECT seat, key, value FROM stats WHERE room = ?`, room)
	if err != nil {
		return nil, fmt.Errorf("stats: %w", err)
	}
	defer rows.Close()
	stats := map[string]map[string]int64{}
	for rows.Next() {
		var (
			seat, key string
			v         int64
		)
		if err := rows.Scan(&seat, &key, &v); err != nil {
			return nil, fmt.Errorf("stats: %w", err)
		}
		if stats[seat] == nil {
			stats[seat] = map[string]int64{}
		}
		stats[seat][key] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("stats: %w", err)
	}
	return stats, nil
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
