package sqlstore

import (
	"fmt"
	"time"

	"github.com/parleyhq/parley"
)

// The statements of Append that are the same on both stores. Each store runs them its own way
// (SQLite: prepared, in its committer's transaction; PostgreSQL: in batches) beside its own
// dedup and answer statements.
const (
	// Takes the room's next seq and locks the room's row until commit. A write that then
	// fails (a duplicate) is rolled back, the seq with it (SQLite without Sole: its batch
	// runs again without that write).
	QueryNextSeq       = `UPDATE rooms SET last_seq = last_seq + 1 WHERE name = $1 RETURNING last_seq`
	QueryInsertMessage = `INSERT INTO messages
		(room, seq, seat, time, format, topic, intent, re, body, tokens, hash, notes, idempotency_key)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`
	QueryInsertAsk = `INSERT INTO asks (room, seq, line, from_seat, to_seat, topic, text, due, dflt, decider, state)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`
	QueryLapse = `UPDATE asks SET state = $1, closed_by = $2
		WHERE room = $3 AND seq = $4 AND line = $5 AND state = $6`
)

// Prepare checks a and returns its message as Append stores it: the time in UTC to the
// microsecond (what both stores keep), no seq yet.
func Prepare(a *parley.Append) (parley.Message, error) {
	if a == nil || a.Message == nil {
		return parley.Message{}, fmt.Errorf("append: no message")
	}
	m := *a.Message
	m.Time = m.Time.UTC().Truncate(time.Microsecond)
	m.Seq = 0
	if a.Lapses != nil && a.Lapses.Room != "" && a.Lapses.Room != m.Room {
		return parley.Message{}, fmt.Errorf("append: lapses an ask of room %q in room %q", a.Lapses.Room, m.Room)
	}
	return m, nil
}

// MessageArgs are the arguments of QueryInsertMessage for m under seq.
func MessageArgs(d Dialect, m *parley.Message, seq int64) ([]any, error) {
	notes, err := MarshalNotes(m.Notes)
	if err != nil {
		return nil, fmt.Errorf("append: %w", err)
	}
	return []any{m.Room, seq, m.Seat, d.Time(m.Time), m.Format, m.Topic, m.Intent, m.Re, []byte(m.Body),
		m.Tokens, NullBytes(m.Hash), notes, NullString(m.IdempotencyKey)}, nil
}

// OpenAsk fills in ask as message m opens it under seq (Room, Seq, open, From defaulting to
// the sender), for the caller of Append to see, and returns the arguments of QueryInsertAsk.
func OpenAsk(d Dialect, ask *parley.Ask, m *parley.Message, seq int64) []any {
	ask.Room, ask.Seq, ask.State, ask.ClosedBy = m.Room, seq, parley.AskOpen, 0
	if ask.From == "" {
		ask.From = m.Seat
	}
	return []any{ask.Room, ask.Seq, ask.Line, ask.From, ask.To, ask.Topic, ask.Text, NullTimePtr(d, ask.Due),
		ask.Default, ask.Decider, ask.State}
}

// LapseArgs are the arguments of QueryLapse: a.Lapses closed by the message under seq.
func LapseArgs(a *parley.Append, seq int64, room string) []any {
	return []any{parley.AskLapsed, seq, room, a.Lapses.Seq, a.Lapses.Line, parley.AskOpen}
}
