package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/parleyhq/parley"
)

// Runs lists a room's run records by time, then id.
func (t Tables) Runs(ctx context.Context, room string) ([]*parley.Run, error) {
	runs, err := queryAll(ctx, t.read, ScanRun, `SELECT `+RunColumns+` FROM runs WHERE room = $1 ORDER BY time, id`, room)
	if err != nil {
		return nil, fmt.Errorf("runs: %w", err)
	}
	return runs, nil
}

// The statements of ImportRoom that Append has no use for.
const (
	queryImportRoom = `INSERT INTO rooms (name, policy, created_at, last_seq) VALUES ($1, $2, $3, $4)`
	queryImportAsk  = `INSERT INTO asks (room, seq, line, from_seat, to_seat, topic, text, due, dflt, decider, state, closed_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`
	queryImportStat = `INSERT INTO stats (room, seat, key, value) VALUES ($1, $2, $3, $4)`
)

// CheckArchive reports the first thing in a that a store could not hold or that would break
// the room's invariants once stored, as EINVALID: messages must be 1, 2, 3… with no gap, asks
// must belong to a message and close with a later one, and everything must name the room.
func CheckArchive(a *parley.RoomArchive) error {
	if a == nil || a.Room == nil || a.Room.Name == "" {
		return parley.Errorf(parley.EINVALID, "import: the archive names no room")
	}
	name := a.Room.Name
	for _, st := range a.Seats {
		if st.Room != name {
			return parley.Errorf(parley.EINVALID, "import: seat %q belongs to room %q, not %q", st.Name, st.Room, name)
		}
		if !st.Role.Valid() {
			return parley.Errorf(parley.EINVALID, "import: seat %q has no valid role (%q)", st.Name, st.Role)
		}
	}
	for i, m := range a.Messages {
		if m.Room != name {
			return parley.Errorf(parley.EINVALID, "import: message #%d belongs to room %q, not %q", m.Seq, m.Room, name)
		}
		if m.Seq != int64(i+1) {
			return parley.Errorf(parley.EINVALID, "import: message #%d stands where #%d belongs: seqs run 1, 2, 3… with no gap", m.Seq, i+1)
		}
	}
	last := int64(len(a.Messages))
	for _, k := range a.Asks {
		switch {
		case k.Room != name:
			return parley.Errorf(parley.EINVALID, "import: an ask of #%d belongs to room %q, not %q", k.Seq, k.Room, name)
		case k.Seq < 1 || k.Seq > last:
			return parley.Errorf(parley.EINVALID, "import: an ask of #%d, which is not among the room's %d messages", k.Seq, last)
		case k.State != parley.AskOpen && k.State != parley.AskAnswered && k.State != parley.AskLapsed:
			return parley.Errorf(parley.EINVALID, "import: ask #%d line %d has state %q", k.Seq, k.Line, k.State)
		case k.ClosedBy > last:
			return parley.Errorf(parley.EINVALID, "import: ask #%d line %d is closed by #%d, past the last message #%d", k.Seq, k.Line, k.ClosedBy, last)
		}
	}
	for _, r := range a.Runs {
		if r.Room != name {
			return parley.Errorf(parley.EINVALID, "import: run %q belongs to room %q, not %q", r.ID, r.Room, name)
		}
	}
	return nil
}

// ImportRoom writes a (see parley.Store.ImportRoom) with the statements of tx, which the store
// runs in one transaction: an error leaves nothing behind once the store rolls it back.
func ImportRoom(ctx context.Context, tx DB, d Dialect, a *parley.RoomArchive) error {
	if err := CheckArchive(a); err != nil {
		return err
	}
	name := a.Room.Name
	policy, err := json.Marshal(a.Room.Policy)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	_, err = tx.Exec(ctx, queryImportRoom, name, string(policy), d.Time(a.Room.CreatedAt), int64(len(a.Messages)))
	switch {
	case d.Unique(err):
		return parley.Errorf(parley.ECONFLICT, "room %q already exists", name)
	case err != nil:
		return fmt.Errorf("import room: %w", err)
	}
	for _, st := range a.Seats {
		var revoked any
		if st.RevokedAt != nil {
			revoked = d.Time(*st.RevokedAt)
		}
		_, err := tx.Exec(ctx, `INSERT INTO seats (room, name, role, token_hash, created_at, revoked_at)
			VALUES ($1, $2, $3, $4, $5, $6)`,
			name, st.Name, string(st.Role), NullBytes(st.TokenHash), d.Time(st.CreatedAt), revoked)
		switch {
		case d.Unique(err):
			return parley.Errorf(parley.EINVALID, "import: seat %q twice, or a token another seat holds", st.Name)
		case err != nil:
			return fmt.Errorf("import seat %q: %w", st.Name, err)
		}
	}
	for _, m := range a.Messages {
		stored := *m
		stored.Time = m.Time.UTC().Truncate(time.Microsecond)
		args, err := MessageArgs(d, &stored, m.Seq)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, QueryInsertMessage, args...); err != nil {
			if d.Unique(err) {
				return parley.Errorf(parley.EINVALID, "import: message #%d repeats an Idempotency-Key of seat %q", m.Seq, m.Seat)
			}
			return fmt.Errorf("import message #%d: %w", m.Seq, err)
		}
	}
	for _, k := range a.Asks {
		_, err := tx.Exec(ctx, queryImportAsk, name, k.Seq, k.Line, k.From, k.To, k.Topic, k.Text,
			NullTimePtr(d, k.Due), k.Default, k.Decider, k.State, k.ClosedBy)
		switch {
		case d.Unique(err):
			return parley.Errorf(parley.EINVALID, "import: two asks on line %d of #%d", k.Line, k.Seq)
		case err != nil:
			return fmt.Errorf("import ask #%d line %d: %w", k.Seq, k.Line, err)
		}
	}
	for _, r := range a.Runs {
		_, err := tx.Exec(ctx, `INSERT INTO runs (`+RunColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			name, r.ID, r.Commit, r.Passed, r.Failed, r.Seat, d.Time(r.Time))
		switch {
		case d.Unique(err):
			return parley.Errorf(parley.EINVALID, "import: run %q twice", r.ID)
		case err != nil:
			return fmt.Errorf("import run %q: %w", r.ID, err)
		}
	}
	for seat, keys := range a.Stats {
		for key, v := range keys {
			if _, err := tx.Exec(ctx, queryImportStat, name, seat, key, v); err != nil {
				return fmt.Errorf("import stat %s/%s: %w", seat, key, err)
			}
		}
	}
	return nil
}
