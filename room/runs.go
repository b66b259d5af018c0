package room

import (
	"context"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/evidence"
)

// maxRunReport caps a run report; a JUnit file of a large suite is a few MiB.
const maxRunReport = 16 << 20

// PostRun stores a test-run record posted by a runner or admin seat of the room.
func (s *Service) PostRun(ctx context.Context, c *parley.Caller, room, contentType string, body []byte, id string) (*parley.Run, error) {
	seat, err := s.poster(ctx, c, room)
	if err != nil {
		return nil, err
	}
	if seat.Role != parley.RoleRunner && seat.Role != parley.RoleAdmin {
		return nil, parley.Errorf(parley.EFORBIDDEN, "seat %s is a %s; run records come from runner or admin seats", seat.Name, seat.Role).
			WithHint("let the CI's runner seat post the run ('parley run post %s --id <id> REPORT'; an admin adds one with 'parley seat add %s ci --role runner'), and cite it with ev run <id>", room, room)
	}
	if len(body) > maxRunReport {
		return nil, parley.Errorf(parley.ETOOLARGE, "the run report is %d bytes; at most %d", len(body), maxRunReport)
	}
	run, err := evidence.ParseRun(contentType, body, id)
	if err != nil {
		return nil, err
	}
	run.Room, run.Seat, run.Time = room, seat.Name, s.now().UTC()
	if err := s.store.CreateRun(ctx, run); err != nil {
		switch parley.ErrorCode(err) {
		case parley.ECONFLICT:
			return nil, parley.Errorf(parley.ECONFLICT, "run %s exists in room %s", run.ID, room).
				WithHint("run records are immutable; post the new run under a new id")
		case parley.ENOTFOUND:
			return nil, parley.Errorf(parley.ENOTFOUND, "no room %s", room)
		}
		return nil, s.internal(ctx, "post run", err)
	}
	return run, nil
}
