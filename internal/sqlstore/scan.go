package sqlstore

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/parleyhq/parley"
)

// The columns each scanner reads, in its order. JSON columns (policy, notes) come back as
// text from both stores: SQLite keeps TEXT, and pgx hands jsonb to a *string as its text.
const (
	RoomColumns    = `name, policy, created_at`
	SeatColumns    = `room, name, role, token_hash, created_at, revoked_at`
	MessageColumns = `room, seq, seat, time, format, topic, intent, re, body, tokens, hash, notes, idempotency_key`
	AskColumns     = `room, seq, line, from_seat, to_seat, topic, text, due, dflt, decider, state, closed_by`
	RunColumns     = `room, id, commit_sha, passed, failed, seat, time`
)

// Qualified is a column list with every column qualified by alias ("m.room, m.seq, …"), for
// a query that joins another table with columns of the same names.
func Qualified(alias, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = alias + "." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

// timeCol scans an instant from either store: SQLite's microseconds since the epoch (int64),
// PostgreSQL's timestamptz (time.Time, which pgx hands to an sql.Scanner). The time is in UTC;
// NULL leaves valid false.
type timeCol struct {
	t     time.Time
	valid bool
}

func (c *timeCol) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*c = timeCol{}
	case int64:
		*c = timeCol{time.UnixMicro(v).UTC(), true}
	case time.Time:
		*c = timeCol{v.UTC(), true}
	default:
		return fmt.Errorf("time column holds %T", src)
	}
	return nil
}

// ptr returns the time, or nil for NULL.
func (c *timeCol) ptr() *time.Time {
	if !c.valid {
		return nil
	}
	t := c.t
	return &t
}

// textCol scans a message body, stored as bytes (BLOB, bytea), into a string with one copy,
// and a text column that may be NULL (the idempotency key) into "" for NULL.
// database/sql calls Scan with the driver's bytes; pgx calls ScanBytes (its BytesScanner) with
// bytes valid only during the call.
type textCol struct{ s *string }

func (c textCol) Scan(src any) error {
	switch v := src.(type) {
	case []byte:
		*c.s = string(v)
	case string:
		*c.s = v
	case nil:
		*c.s = ""
	default:
		return fmt.Errorf("text column holds %T", src)
	}
	return nil
}

func (c textCol) ScanBytes(b []byte) error {
	*c.s = string(b)
	return nil
}

// ScanRoom reads RoomColumns.
func ScanRoom(row Row) (*parley.Room, error) {
	var (
		r      parley.Room
		policy string
		at     timeCol
	)
	if err := row.Scan(&r.Name, &policy, &at); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(policy), &r.Policy); err != nil {
		return nil, fmt.Errorf("room %q policy: %w", r.Name, err)
	}
	r.CreatedAt = at.t
	return &r, nil
}

// ScanSeat reads SeatColumns.
func ScanSeat(row Row) (*parley.Seat, error) {
	var (
		st          parley.Seat
		role        string
		at, revoked timeCol
	)
	if err := row.Scan(&st.Room, &st.Name, &role, &st.TokenHash, &at, &revoked); err != nil {
		return nil, err
	}
	st.Role = parley.Role(role)
	st.CreatedAt = at.t
	st.RevokedAt = revoked.ptr()
	return &st, nil
}

// ScanMessage reads MessageColumns. Empty notes and hash come back nil, as Append returns them.
func ScanMessage(row Row) (*parley.Message, error) {
	var (
		m     parley.Message
		at    timeCol
		notes string
	)
	if err := row.Scan(&m.Room, &m.Seq, &m.Seat, &at, &m.Format, &m.Topic, &m.Intent, &m.Re,
		textCol{&m.Body}, &m.Tokens, &m.Hash, &notes, textCol{&m.IdempotencyKey}); err != nil {
		return nil, err
	}
	m.Time = at.t
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

// ScanAsk reads AskColumns.
func ScanAsk(row Row) (*parley.Ask, error) {
	var (
		a   parley.Ask
		due timeCol
	)
	if err := row.Scan(&a.Room, &a.Seq, &a.Line, &a.From, &a.To, &a.Topic, &a.Text, &due,
		&a.Default, &a.Decider, &a.State, &a.ClosedBy); err != nil {
		return nil, err
	}
	a.Due = due.ptr()
	return &a, nil
}

// ScanRun reads RunColumns.
func ScanRun(row Row) (*parley.Run, error) {
	var (
		r  parley.Run
		at timeCol
	)
	if err := row.Scan(&r.Room, &r.ID, &r.Commit, &r.Passed, &r.Failed, &r.Seat, &at); err != nil {
		return nil, err
	}
	r.Time = at.t
	return &r, nil
}

// MarshalNotes encodes a message's notes for the notes column: "[]" for none.
func MarshalNotes(notes []string) (string, error) {
	if len(notes) == 0 {
		return "[]", nil
	}
	b, err := json.Marshal(notes)
	if err != nil {
		return "", fmt.Errorf("notes: %w", err)
	}
	return string(b), nil
}

// Stored returns m as Append stored it under seq: empty notes and hash nil, as ScanMessage
// reads them back.
func Stored(m parley.Message, seq int64) *parley.Message {
	m.Seq = seq
	if len(m.Notes) == 0 {
		m.Notes = nil
	}
	if len(m.Hash) == 0 {
		m.Hash = nil
	}
	return &m
}
