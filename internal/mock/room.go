// Package mock holds hand-written mocks of parley's service interfaces. Each method calls the
// function field of the same name, so a test sets only what it exercises; calling a method
// whose field is nil panics with the method's name, which points straight at the gap.
package mock

import (
	"context"

	"github.com/parleyhq/parley"
)

var _ parley.RoomService = (*RoomService)(nil)

// RoomService is a parley.RoomService whose behaviour is given by function fields.
type RoomService struct {
	AuthenticateFn func(ctx context.Context, token string) (*parley.Caller, error)
	CreateRoomFn   func(ctx context.Context, c *parley.Caller, name string, p *parley.Policy) (*parley.Room, error)
	UpdatePolicyFn func(ctx context.Context, c *parley.Caller, room string, patch []byte) (*parley.Room, error)
	RoomFn         func(ctx context.Context, c *parley.Caller, room string) (*parley.Room, error)
	RoomsFn        func(ctx context.Context, c *parley.Caller) ([]*parley.Room, error)
	AddSeatFn      func(ctx context.Context, c *parley.Caller, room, name string, role parley.Role) (*parley.Seat, string, error)
	SeatsFn        func(ctx context.Context, c *parley.Caller, room string) ([]*parley.Seat, error)
	RevokeSeatFn   func(ctx context.Context, c *parley.Caller, room, name string) error
	RotateSeatFn   func(ctx context.Context, c *parley.Caller, room, name string) (string, error)
	PostFn         func(ctx context.Context, c *parley.Caller, room string, body []byte, idempotencyKey string) (*parley.PostResult, error)
	PostDraftFn    func(ctx context.Context, c *parley.Caller, room string, d *parley.Draft, idempotencyKey string) (*parley.PostResult, error)
	SearchFn       func(ctx context.Context, c *parley.Caller, room, query string, limit int) (*parley.SearchResults, error)
	HistoryFn      func(ctx context.Context, c *parley.Caller, room string, after int64, limit int) ([]byte, int64, error)
	HistoryPageFn  func(ctx context.Context, c *parley.Caller, room string, after int64, limit int) (*parley.HistoryPage, error)
	MessagesFn     func(ctx context.Context, c *parley.Caller, room string, after int64, limit int, count parley.ReadCount) ([]*parley.Message, int64, error)
	InboxFn        func(ctx context.Context, c *parley.Caller, room string) (*parley.Inbox, error)
	StateFn        func(ctx context.Context, c *parley.Caller, room, topic string) (*parley.StateRecord, error)
	PostRunFn      func(ctx context.Context, c *parley.Caller, room string, contentType string, body []byte, id string) (*parley.Run, error)
	StatsFn        func(ctx context.Context, c *parley.Caller, room string) (*parley.RoomStats, error)
	WatchFn        func(ctx context.Context, c *parley.Caller, room string) (<-chan int64, error)
	LintFn         func(ctx context.Context, c *parley.Caller, room string, body []byte) ([]parley.Diagnostic, error)
	HoldFn         func(ctx context.Context, c *parley.Caller) (context.Context, context.CancelFunc, error)
}

func unset(name string) { panic("mock.RoomService." + name + "Fn is not set") }

func (s *RoomService) Authenticate(ctx context.Context, token string) (*parley.Caller, error) {
	if s.AuthenticateFn == nil {
		unset("Authenticate")
	}
	return s.AuthenticateFn(ctx, token)
}

func (s *RoomService) CreateRoom(ctx context.Context, c *parley.Caller, name string, p *parley.Policy) (*parley.Room, error) {
	if s.CreateRoomFn == nil {
		unset("CreateRoom")
	}
	return s.CreateRoomFn(ctx, c, name, p)
}

func (s *RoomService) UpdatePolicy(ctx context.Context, c *parley.Caller, room string, patch []byte) (*parley.Room, error) {
	if s.UpdatePolicyFn == nil {
		unset("UpdatePolicy")
	}
	return s.UpdatePolicyFn(ctx, c, room, patch)
}

func (s *RoomService) Room(ctx context.Context, c *parley.Caller, room string) (*parley.Room, error) {
	if s.RoomFn == nil {
		unset("Room")
	}
	return s.RoomFn(ctx, c, room)
}

func (s *RoomService) Rooms(ctx context.Context, c *parley.Caller) ([]*parley.Room, error) {
	if s.RoomsFn == nil {
		unset("Rooms")
	}
	return s.RoomsFn(ctx, c)
}

func (s *RoomService) AddSeat(ctx context.Context, c *parley.Caller, room, name string, role parley.Role) (*parley.Seat, string, error) {
	if s.AddSeatFn == nil {
		unset("AddSeat")
	}
	return s.AddSeatFn(ctx, c, room, name, role)
}

func (s *RoomService) Seats(ctx context.Context, c *parley.Caller, room string) ([]*parley.Seat, error) {
	if s.SeatsFn == nil {
		unset("Seats")
	}
	return s.SeatsFn(ctx, c, room)
}

func (s *RoomService) RevokeSeat(ctx context.Context, c *parley.Caller, room, name string) error {
	if s.RevokeSeatFn == nil {
		unset("RevokeSeat")
	}
	return s.RevokeSeatFn(ctx, c, room, name)
}

func (s *RoomService) RotateSeat(ctx context.Context, c *parley.Caller, room, name string) (string, error) {
	if s.RotateSeatFn == nil {
		unset("RotateSeat")
	}
	return s.RotateSeatFn(ctx, c, room, name)
}

func (s *RoomService) Post(ctx context.Context, c *parley.Caller, room string, body []byte, idempotencyKey string) (*parley.PostResult, error) {
	if s.PostFn == nil {
		unset("Post")
	}
	return s.PostFn(ctx, c, room, body, idempotencyKey)
}

func (s *RoomService) PostDraft(ctx context.Context, c *parley.Caller, room string, d *parley.Draft, idempotencyKey string) (*parley.PostResult, error) {
	if s.PostDraftFn == nil {
		unset("PostDraft")
	}
	return s.PostDraftFn(ctx, c, room, d, idempotencyKey)
}

func (s *RoomService) Search(ctx context.Context, c *parley.Caller, room, query string, limit int) (*parley.SearchResults, error) {
	if s.SearchFn == nil {
		unset("Search")
	}
	return s.SearchFn(ctx, c, room, query, limit)
}

func (s *RoomService) History(ctx context.Context, c *parley.Caller, room string, after int64, limit int) ([]byte, int64, error) {
	if s.HistoryFn == nil {
		unset("History")
	}
	return s.HistoryFn(ctx, c, room, after, limit)
}

func (s *RoomService) HistoryPage(ctx context.Context, c *parley.Caller, room string, after int64, limit int) (*parley.HistoryPage, error) {
	if s.HistoryPageFn == nil {
		unset("HistoryPage")
	}
	return s.HistoryPageFn(ctx, c, room, after, limit)
}

func (s *RoomService) Messages(ctx context.Context, c *parley.Caller, room string, after int64, limit int, count parley.ReadCount) ([]*parley.Message, int64, error) {
	if s.MessagesFn == nil {
		unset("Messages")
	}
	return s.MessagesFn(ctx, c, room, after, limit, count)
}

func (s *RoomService) Inbox(ctx context.Context, c *parley.Caller, room string) (*parley.Inbox, error) {
	if s.InboxFn == nil {
		unset("Inbox")
	}
	return s.InboxFn(ctx, c, room)
}

func (s *RoomService) State(ctx context.Context, c *parley.Caller, room, topic string) (*parley.StateRecord, error) {
	if s.StateFn == nil {
		unset("State")
	}
	return s.StateFn(ctx, c, room, topic)
}

func (s *RoomService) PostRun(ctx context.Context, c *parley.Caller, room string, contentType string, body []byte, id string) (*parley.Run, error) {
	if s.PostRunFn == nil {
		unset("PostRun")
	}
	return s.PostRunFn(ctx, c, room, contentType, body, id)
}

func (s *RoomService) Stats(ctx context.Context, c *parley.Caller, room string) (*parley.RoomStats, error) {
	if s.StatsFn == nil {
		unset("Stats")
	}
	return s.StatsFn(ctx, c, room)
}

func (s *RoomService) Watch(ctx context.Context, c *parley.Caller, room string) (<-chan int64, error) {
	if s.WatchFn == nil {
		unset("Watch")
	}
	return s.WatchFn(ctx, c, room)
}

func (s *RoomService) Lint(ctx context.Context, c *parley.Caller, room string, body []byte) ([]parley.Diagnostic, error) {
	if s.LintFn == nil {
		unset("Lint")
	}
	return s.LintFn(ctx, c, room, body)
}

func (s *RoomService) Hold(ctx context.Context, c *parley.Caller) (context.Context, context.CancelFunc, error) {
	if s.HoldFn == nil {
		unset("Hold")
	}
	return s.HoldFn(ctx, c)
}
