package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parleyhq/parley"
)

// CreateRoom stores a new room. ECONFLICT if the name is taken.
func (s *Store) CreateRoom(ctx context.Context, r *parley.Room) error {
	policy, err := json.Marshal(r.Policy)
	if err != nil {
		return fmt.Errorf("create room: %w", err)
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO rooms (name, policy, created_at) VALUES ($1, $2, $3)`,
		r.Name, string(policy), r.CreatedAt)
	if sqlState(err) == uniqueViolation {
		return parley.Errorf(parley.ECONFLICT, "room %q already exists", r.Name).
			WithHint("choose another name")
	}
	if err != nil {
		return fmt.Errorf("create room: %w", err)
	}
	return nil
}

const roomColumns = `name, policy::text, created_at`

func scanRoom(row pgx.Row) (*parley.Room, error) {
	var (
		r      parley.Room
		policy string
	)
	if err := row.Scan(&r.Name, &policy, &r.CreatedAt); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(policy), &r.Policy); err != nil {
		return nil, fmt.Errorf("room %q policy: %w", r.Name, err)
	}
	r.CreatedAt = utc(r.CreatedAt)
	return &r, nil
}

// Room returns one room. ENOTFOUND.
func (s *Store) Room(ctx context.Context, name string) (*parley.Room, error) {
	r, err := scanRoom(s.pool.QueryRow(ctx, `SELECT `+roomColumns+` FROM rooms WHERE name = $1`, name))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, roomNotFound(name)
	}
	if err != nil {
		return nil, fmt.Errorf("room: %w", err)
	}
	return r, nil
}

// Rooms lists every room by name.
func (s *Store) Rooms(ctx context.Context) ([]*parley.Room, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+roomColumns+` FROM rooms ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("rooms: %w", err)
	}
	rooms, err := collect(rows, func(row pgx.CollectableRow) (*parley.Room, error) { return scanRoom(row) })
	if err != nil {
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
	tag, err := s.pool.Exec(ctx, `UPDATE rooms SET policy = $1 WHERE name = $2`, string(policy), room)
	if err != nil {
		return fmt.Errorf("update policy: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return roomNotFound(room)
	}
	return nil
}

// nullBytes stores an empty hash as NULL, so that seats without a token never collide on the
// unique token index.
func nullBytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// CreateSeat stores a new seat. ENOTFOUND for the room; ECONFLICT if the name is taken.
func (s *Store) CreateSeat(ctx context.Context, st *parley.Seat) error {
	var revoked *time.Time
	if st.RevokedAt != nil {
		revoked = nullTime(*st.RevokedAt)
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO seats (room, name, role, token_hash, created_at, revoked_at)
		VALUES ($1, $2, $3, $4, $5, $6)`,
		st.Room, st.Name, string(st.Role), nullBytes(st.TokenHash), st.CreatedAt, revoked)
	switch sqlState(err) {
	case "":
		if err != nil {
			return fmt.Errorf("create seat: %w", err)
		}
		return nil
	case foreignKeyViolation:
		return roomNotFound(st.Room)
	case uniqueViolation:
		// The name or, against all odds, the token hash: tell which without parsing messages.
		if _, serr := s.Seat(ctx, st.Room, st.Name); serr == nil {
			return parley.Errorf(parley.ECONFLICT, "seat %q already exists in room %q", st.Name, st.Room).
				WithHint("revoked seats keep their name; choose another")
		}
		return parley.Errorf(parley.ECONFLICT, "token already belongs to another seat")
	}
	return fmt.Errorf("create seat: %w", err)
}

const seatColumns = `room, name, role, token_hash, created_at, revoked_at`

func scanSeat(row pgx.Row) (*parley.Seat, error) {
	var (
		st      parley.Seat
		role    string
		revoked *time.Time
	)
	if err := row.Scan(&st.Room, &st.Name, &role, &st.TokenHash, &st.CreatedAt, &revoked); err != nil {
		return nil, err
	}
	st.Role = parley.Role(role)
	st.CreatedAt = utc(st.CreatedAt)
	if revoked != nil {
		t := revoked.UTC()
		st.RevokedAt = &t
	}
	return &st, nil
}

func seatNotFound(room, name string) error {
	return parley.Errorf(parley.ENOTFOUND, "seat %q not found in room %q", name, room)
}

// Seat returns one seat, revoked or not. ENOTFOUND.
func (s *Store) Seat(ctx context.Context, room, name string) (*parley.Seat, error) {
	st, err := scanSeat(s.pool.QueryRow(ctx, `SELECT `+seatColumns+` FROM seats WHERE room = $1 AND name = $2`, room, name))
	if errors.Is(err, pgx.ErrNoRows) {
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
	st, err := scanSeat(s.pool.QueryRow(ctx, `SELECT `+seatColumns+` FROM seats WHERE token_hash = $1`, hash))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, parley.Errorf(parley.ENOTFOUND, "no seat has this token")
	}
	if err != nil {
		return nil, fmt.Errorf("seat by token: %w", err)
	}
	return st, nil
}

// Seats lists a room's seats by name, revoked ones included.
func (s *Store) Seats(ctx context.Context, room string) ([]*parley.Seat, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+seatColumns+` FROM seats WHERE room = $1 ORDER BY name`, room)
	if err != nil {
		return nil, fmt.Errorf("seats: %w", err)
	}
	seats, err := collect(rows, func(row pgx.CollectableRow) (*parley.Seat, error) { return scanSeat(row) })
	if err != nil {
		return nil, fmt.Errorf("seats: %w", err)
	}
	return seats, nil
}

// RevokeSeat marks a seat revoked at t. ENOTFOUND.
func (s *Store) RevokeSeat(ctx context.Context, room, name string, t time.Time) error {
	// The NOTIFY goes out with the update's commit, to every process (seatChannel).
	tag, err := s.pool.Exec(ctx, `WITH u AS (UPDATE seats SET revoked_at = $1 WHERE room = $2 AND name = $3 RETURNING 1)
		SELECT pg_notify('`+seatChannel+`', $4) FROM u`, t, room, name, room+" "+name)
	if err != nil {
		return fmt.Errorf("revoke seat: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return seatNotFound(room, name)
	}
	return nil
}

// SetSeatToken replaces a seat's token hash. ENOTFOUND.
func (s *Store) SetSeatToken(ctx context.Context, room, name string, hash []byte) error {
	tag, err := s.pool.Exec(ctx, `WITH u AS (UPDATE seats SET token_hash = $1 WHERE room = $2 AND name = $3 RETURNING 1)
		SELECT pg_notify('`+seatChannel+`', $4) FROM u`, nullBytes(hash), room, name, room+" "+name)
	if sqlState(err) == uniqueViolation {
		return parley.Errorf(parley.ECONFLICT, "token already belongs to another seat")
	}
	if err != nil {
		return fmt.Errorf("set seat token: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return seatNotFound(room, name)
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
	out, err := s.group(ctx, a, m)
	switch {
	case errors.Is(err, parley.ErrReplay):
		return out, err
	case err != nil:
		return nil, err
	}
	return out, nil
}

// appendTx is Append inside its (shared) transaction, in a savepoint that the caller rolls
// back to when it fails. It does not commit.
func appendTx(ctx context.Context, tx pgx.Tx, a *parley.Append, m parley.Message) (*parley.Message, error) {
	seq, orig, err := lockAndCheck(ctx, tx, a, &m)
	if err != nil {
		return orig, err // orig with ErrReplay
	}
	notes, err := marshalNotes(m.Notes)
	if err != nil {
		return nil, fmt.Errorf("append: %w", err)
	}
	var key *string
	if m.IdempotencyKey != "" {
		key = &m.IdempotencyKey
	}
	// The writes go in one batch: one round trip instead of one per statement. The lapse goes
	// first, so that its result can be read before the others'.
	b := &pgx.Batch{}
	if a.Lapses != nil {
		b.Queue(`UPDATE asks SET state = $1, closed_by = $2
			WHERE room = $3 AND seq = $4 AND line = $5 AND state = $6`,
			parley.AskLapsed, seq, m.Room, a.Lapses.Seq, a.Lapses.Line, parley.AskOpen)
	}
	b.Queue(`INSERT INTO messages
		(room, seq, seat, time, format, topic, intent, re, body, tokens, hash, notes, idempotency_key)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		m.Room, seq, m.Seat, m.Time, m.Format, m.Topic, m.Intent, m.Re, []byte(m.Body),
		m.Tokens, nullBytes(m.Hash), notes, key)
	for _, ask := range a.Asks {
		ask.Room, ask.Seq, ask.State, ask.ClosedBy = m.Room, seq, parley.AskOpen, 0
		if ask.From == "" {
			ask.From = m.Seat
		}
		b.Queue(`INSERT INTO asks (room, seq, line, from_seat, to_seat, topic, text, due, dflt, decider, state)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
			ask.Room, ask.Seq, ask.Line, ask.From, ask.To, ask.Topic, ask.Text, ask.Due,
			ask.Default, ask.Decider, ask.State)
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
			return nil, parley.Errorf(parley.ECONFLICT, "ask #%d line %d is no longer open", a.Lapses.Seq, a.Lapses.Line)
		}
		if err != nil {
			br.Close()
			return nil, fmt.Errorf("append: lapse ask: %w", err)
		}
	}
	if err := br.Close(); err != nil {
		if sqlState(err) == uniqueViolation && len(a.Asks) > 0 {
			return nil, parley.Errorf(parley.EINVALID, "two asks on one line")
		}
		return nil, fmt.Errorf("append: %w", err)
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

// lockAndCheck takes the room's next seq, which locks its row, and then runs the idempotency
// and dedup checks, all in one round trip: statements of a batch run in order, so the checks
// run after the lock and see every append to the room that committed before it.
func lockAndCheck(ctx context.Context, tx pgx.Tx, a *parley.Append, m *parley.Message) (seq int64, orig *parley.Message, err error) {
	b := &pgx.Batch{}
	b.Queue(`SAVEPOINT op`) // see group.go: in the same round trip
	b.Queue(`UPDATE rooms SET last_seq = last_seq + 1 WHERE name = $1 RETURNING last_seq`, m.Room)
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
		return 0, nil, roomNotFound(m.Room)
	}
	if err != nil {
		return 0, nil, fmt.Errorf("append: %w", err)
	}
	if m.IdempotencyKey != "" {
		orig, err := scanMessage(br.QueryRow())
		switch {
		case err == nil:
			return 0, orig, parley.ErrReplay // the rollback returns the seq
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
			return 0, nil, duplicateError(dup)
		}
	}
	return seq, nil, nil
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

const qByKey = `SELECT ` + messageColumns + ` FROM messages WHERE room = $1 AND seat = $2 AND idempotency_key = $3`

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

const messageColumns = `room, seq, seat, time, format, topic, intent, re, body, tokens, hash, notes::text, idempotency_key`

func scanMessage(row pgx.Row) (*parley.Message, error) {
	var (
		m     parley.Message
		body  []byte
		notes string
		key   *string
	)
	if err := row.Scan(&m.Room, &m.Seq, &m.Seat, &m.Time, &m.Format, &m.Topic, &m.Intent, &m.Re,
		&body, &m.Tokens, &m.Hash, &notes, &key); err != nil {
		return nil, err
	}
	m.Time = utc(m.Time)
	m.Body = string(body)
	if key != nil {
		m.IdempotencyKey = *key
	}
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

func collectMessages(rows pgx.Rows) ([]*parley.Message, error) {
	return collect(rows, func(row pgx.CollectableRow) (*parley.Message, error) { return scanMessage(row) })
}

// Messages returns the room's messages with seq > after, in seq order, at most limit.
func (s *Store) Messages(ctx context.Context, room string, after int64, limit int) ([]*parley.Message, error) {
	var lim *int
	if limit > 0 {
		lim = &limit // LIMIT NULL: no limit
	}
	rows, err := s.pool.Query(ctx, `SELECT `+messageColumns+` FROM messages
		WHERE room = $1 AND seq > $2 ORDER BY seq LIMIT $3`, room, after, lim)
	if err != nil {
		return nil, fmt.Errorf("messages: %w", err)
	}
	msgs, err := collectMessages(rows)
	if err != nil {
		return nil, fmt.Errorf("messages: %w", err)
	}
	return msgs, nil
}

// Message returns one message. ENOTFOUND.
func (s *Store) Message(ctx context.Context, room string, seq int64) (*parley.Message, error) {
	m, err := scanMessage(s.pool.QueryRow(ctx, `SELECT `+messageColumns+` FROM messages
		WHERE room = $1 AND seq = $2`, room, seq))
	if errors.Is(err, pgx.ErrNoRows) {
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
	err := s.pool.QueryRow(ctx, `SELECT last_seq FROM rooms WHERE name = $1`, room).Scan(&last)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, roomNotFound(room)
	}
	if err != nil {
		return 0, fmt.Errorf("last seq: %w", err)
	}
	return last, nil
}

// ByIdempotencyKey returns the message a seat posted with key. ENOTFOUND.
func (s *Store) ByIdempotencyKey(ctx context.Context, room, seat, key string) (*parley.Message, error) {
	m, err := scanMessage(s.pool.QueryRow(ctx, qByKey, room, seat, key))
	if errors.Is(err, pgx.ErrNoRows) {
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
	if !wantDuplicate(hash, since, n) {
		return 0, nil
	}
	var seq int64
	if err := s.pool.QueryRow(ctx, qDuplicate, duplicateArgs(room, seat, hash, since, n)...).Scan(&seq); err != nil {
		return 0, fmt.Errorf("duplicate: %w", err)
	}
	return seq, nil
}

const askColumns = `room, seq, line, from_seat, to_seat, topic, text, due, dflt, decider, state, closed_by`

func collectAsks(rows pgx.Rows) ([]*parley.Ask, error) {
	return collect(rows, func(row pgx.CollectableRow) (*parley.Ask, error) {
		var (
			a   parley.Ask
			due *time.Time
		)
		if err := row.Scan(&a.Room, &a.Seq, &a.Line, &a.From, &a.To, &a.Topic, &a.Text, &due,
			&a.Default, &a.Decider, &a.State, &a.ClosedBy); err != nil {
			return nil, err
		}
		if due != nil {
			t := due.UTC()
			a.Due = &t
		}
		return &a, nil
	})
}

// Asks returns the room's asks in the given state ("" for all), by seq and line.
func (s *Store) Asks(ctx context.Context, room, state string) ([]*parley.Ask, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+askColumns+` FROM asks
		WHERE room = $1 AND ($2 = '' OR state = $2) ORDER BY seq, line`, room, state)
	if err != nil {
		return nil, fmt.Errorf("asks: %w", err)
	}
	asks, err := collectAsks(rows)
	if err != nil {
		return nil, fmt.Errorf("asks: %w", err)
	}
	return asks, nil
}

// DueAsks returns open asks, in every room, whose Due is set and not after t, earliest first.
func (s *Store) DueAsks(ctx context.Context, t time.Time) ([]*parley.Ask, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+askColumns+` FROM asks
		WHERE state = 'open' AND due IS NOT NULL AND due <= $1 ORDER BY due, room, seq, line`, t)
	if err != nil {
		return nil, fmt.Errorf("due asks: %w", err)
	}
	asks, err := collectAsks(rows)
	if err != nil {
		return nil, fmt.Errorf("due asks: %w", err)
	}
	return asks, nil
}

// NextDue returns the earliest Due of any open ask, or the zero time.
func (s *Store) NextDue(ctx context.Context) (time.Time, error) {
	var due *time.Time
	if err := s.pool.QueryRow(ctx,
		`SELECT min(due) FROM asks WHERE state = 'open' AND due IS NOT NULL`).Scan(&due); err != nil {
		return time.Time{}, fmt.Errorf("next due: %w", err)
	}
	return fromNullTime(due), nil
}

// CreateRun stores a run record. ENOTFOUND for the room; ECONFLICT if the id exists.
func (s *Store) CreateRun(ctx context.Context, r *parley.Run) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO runs (room, id, commit_sha, passed, failed, seat, time)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, r.Room, r.ID, r.Commit, r.Passed, r.Failed, r.Seat, r.Time)
	switch sqlState(err) {
	case "":
		if err != nil {
			return fmt.Errorf("create run: %w", err)
		}
		return nil
	case foreignKeyViolation:
		return roomNotFound(r.Room)
	case uniqueViolation:
		return parley.Errorf(parley.ECONFLICT, "run %q already exists in room %q", r.ID, r.Room).
			WithHint("give each run its own id")
	}
	return fmt.Errorf("create run: %w", err)
}

// Run returns one run. ENOTFOUND.
func (s *Store) Run(ctx context.Context, room, id string) (*parley.Run, error) {
	var r parley.Run
	err := s.pool.QueryRow(ctx, `SELECT room, id, commit_sha, passed, failed, seat, time
		FROM runs WHERE room = $1 AND id = $2`, room, id).
		Scan(&r.Room, &r.ID, &r.Commit, &r.Passed, &r.Failed, &r.Seat, &r.Time)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, parley.Errorf(parley.ENOTFOUND, "run %q not found in room %q", id, room)
	}
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	r.Time = utc(r.Time)
	return &r, nil
}

// AddStat adds delta to a per-room, per-seat counter. ENOTFOUND for the room.
func (s *Store) AddStat(ctx context.Context, room, seat, key string, delta int64) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO stats (room, seat, key, value) VALUES ($1, $2, $3, $4)
		ON CONFLICT (room, seat, key) DO UPDATE SET value = stats.value + excluded.value`, room, seat, key, delta)
	if sqlState(err) == foreignKeyViolation {
		return roomNotFound(room)
	}
	if err != nil {
		return fmt.Errorf("add stat: %w", err)
	}
	return nil
}

// Stats returns every counter of a room as seat -> key -> value.
func (s *Store) Stats(ctx context.Context, room string) (map[string]map[string]int64, error) {
	rows, err := s.pool.Query(ctx, `SELECT seat, key, value FROM stats WHERE room = $1`, room)
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

// collect is pgx.CollectRows, but returns nil rather than an empty slice for no rows, as the
// SQLite store does, so that the edges encode an empty list alike whichever store serves them.
func collect[T any](rows pgx.Rows, fn pgx.RowToFunc[T]) ([]T, error) {
	return pgx.AppendRows([]T(nil), rows, fn)
}
