package room

import (
	"context"
	"io"
	"sort"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/archive"
)

var _ parley.RoomArchiver = (*Service)(nil)

// exportPage is how many messages an export reads from the store at a time.
const exportPage = 256

// ExportRoom writes the room as an export (package internal/archive) to w: server admin only.
//
// The export is the room as of its last seq when the export starts: messages posted meanwhile
// are left out, and an ask closed by one of them is written as still open, so that the file
// holds together (an import of it is a room that stopped at that seq).
func (s *Service) ExportRoom(ctx context.Context, c *parley.Caller, room string, w io.Writer) error {
	if c == nil || !c.Admin {
		return parley.Errorf(parley.EFORBIDDEN, "only the server admin exports rooms").
			WithHint("run `parley export` with the server's admin token")
	}
	r, err := s.room(ctx, room)
	if err != nil {
		return err
	}
	last, err := s.store.LastSeq(ctx, room)
	if err != nil {
		return s.internal(ctx, "export: last seq", err)
	}
	seats, err := s.store.Seats(ctx, room)
	if err != nil {
		return s.internal(ctx, "export: seats", err)
	}
	aw := archive.NewWriter(w)
	if err := aw.Room(r, last); err != nil {
		return err
	}
	for _, st := range seats {
		if err := aw.Seat(st); err != nil {
			return err
		}
	}
	for after := int64(0); after < last; {
		msgs, err := s.store.Messages(ctx, room, after, exportPage)
		if err != nil {
			return s.internal(ctx, "export: messages", err)
		}
		if len(msgs) == 0 {
			break
		}
		for _, m := range msgs {
			if m.Seq > last {
				break
			}
			if err := aw.Message(m); err != nil {
				return err
			}
			after = m.Seq
		}
		if err := aw.Flush(); err != nil {
			return err
		}
	}
	asks, err := s.store.Asks(ctx, room, "")
	if err != nil {
		return s.internal(ctx, "export: asks", err)
	}
	for _, k := range asks {
		if k.Seq > last {
			continue
		}
		if k.ClosedBy > last {
			open := *k
			open.State, open.ClosedBy = parley.AskOpen, 0
			k = &open
		}
		if err := aw.Ask(k); err != nil {
			return err
		}
	}
	runs, err := s.store.Runs(ctx, room)
	if err != nil {
		return s.internal(ctx, "export: runs", err)
	}
	for _, run := range runs {
		if err := aw.Run(run); err != nil {
			return err
		}
	}
	s.flushStats(ctx)
	stats, err := s.store.Stats(ctx, room)
	if err != nil {
		return s.internal(ctx, "export: stats", err)
	}
	for _, seat := range sortedKeys(stats) {
		for _, key := range sortedKeys(stats[seat]) {
			if err := aw.Stat(seat, key, stats[seat][key]); err != nil {
				return err
			}
		}
	}
	return aw.End()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ImportRoom reads an export and creates its room with everything in it, in one transaction
// of the store: server admin only, into a server that lacks the room. The seats come without
// tokens: each gets one when an admin rotates it.
func (s *Service) ImportRoom(ctx context.Context, c *parley.Caller, r io.Reader) (*parley.ImportResult, error) {
	if c == nil || !c.Admin {
		return nil, parley.Errorf(parley.EFORBIDDEN, "only the server admin imports rooms").
			WithHint("run `parley import` with the server's admin token")
	}
	a, err := archive.Read(r)
	if err != nil {
		return nil, err
	}
	name := a.Room.Name
	if !roomName.MatchString(name) {
		return nil, parley.Errorf(parley.EINVALID, "line 1: room name %q is not a legible word", name)
	}
	if err := a.Room.Policy.Validate(); err != nil {
		return nil, parley.Errorf(parley.EINVALID, "line 1: %v", err)
	}
	for _, st := range a.Seats {
		st.TokenHash = nil // an export holds none; a hand-made file must not bring one
	}
	if err := s.store.ImportRoom(ctx, a); err != nil {
		switch parley.ErrorCode(err) {
		case parley.ECONFLICT:
			return nil, parley.Errorf(parley.ECONFLICT, "room %s exists on this server: import creates a room, it never merges into one", name).
				WithHint("import into a server that lacks the room, or remove the room here first")
		case parley.EINVALID:
			return nil, err
		}
		return nil, s.internal(ctx, "import", err)
	}
	s.nudge() // the room may hold open asks with a time
	res := &parley.ImportResult{Room: name, LastSeq: int64(len(a.Messages)), Messages: len(a.Messages), Asks: len(a.Asks), Runs: len(a.Runs), Seats: []string{}}
	for _, st := range a.Seats {
		res.Seats = append(res.Seats, st.Name)
	}
	return res, nil
}
