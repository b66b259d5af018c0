package room

import (
	"context"
	"crypto/subtle"
	"fmt"
	"sync"
	"time"

	"github.com/parleyhq/parley"
)

// Holds: how a revocation or rotation reaches requests that outlive their authentication (an
// event stream, a waiting read, an MCP session).
//
// Such a request calls Hold once it has its caller, and works under the context Hold returns.
// The Service keeps every hold by seat. When a seat's token stops being valid, the hold's
// context is cancelled, with the reason as its cause:
//
//   - at once and before RevokeSeat or RotateSeat returns, when this Service made the change;
//   - on the store's WatchSeats notification otherwise (another `parley serve` process on the
//     same PostgreSQL database: LISTEN/NOTIFY, milliseconds), after reading the seat again,
//     so that a late notice of an old rotation cannot end a hold of the new token.
//
// Cancelling ends the edge's stream or call promptly. It alone could not promise that nothing
// posted after the revocation is delivered: a notification from another process may lag
// behind the post that followed the revocation. So History, under a held context, confirms
// the token against the store after reading the messages and before returning any: a message
// it read was committed before that confirmation, and a revocation committed before the
// message is then visible to it. One indexed read per delivery, and none while idle.

// holdCheckTimeout bounds the store read that checks a seat after a change notification.
const holdCheckTimeout = 10 * time.Second

type holdKey struct{}

type seatKey struct{ room, seat string }

// hold is one held request: the seat and the hash of the token it authenticated with.
type hold struct {
	key    seatKey
	hash   []byte
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// holds is the Service's registry of holds, by seat.
type holds struct {
	mu    sync.Mutex
	m     map[seatKey]map[*hold]struct{}
	watch sync.Once // starts the goroutine that follows the store's seat changes
}

// Hold binds a long-lived request to the caller's token: the returned context ends when ctx
// does, or as soon as the token is revoked or rotated, here or on any other server on the same
// database, with a *parley.Error (EUNAUTHORIZED) saying why as its context.Cause. History under
// that context never returns a message once the token has stopped being valid. The caller must
// call the CancelFunc when the request ends. EUNAUTHORIZED when the token is no longer valid
// already. The server admin's token is not a seat's and cannot be revoked: its hold ends only
// with ctx.
func (s *Service) Hold(ctx context.Context, c *parley.Caller) (context.Context, context.CancelFunc, error) {
	if c == nil || (!c.Admin && c.Seat == nil) {
		return nil, nil, parley.Errorf(parley.EUNAUTHORIZED, "no caller")
	}
	if c.Admin {
		hctx, cancel := context.WithCancel(ctx)
		return hctx, cancel, nil
	}
	// Subscribed here, before the first hold is registered and checked, not in the
	// goroutine: a change made between this hold's check and a late subscription would
	// otherwise reach no one.
	s.holds.watch.Do(func() { go s.followSeats(s.store.WatchSeats(context.Background())) })
	hctx, cancel := context.WithCancelCause(ctx)
	h := &hold{key: seatKey{c.Seat.Room, c.Seat.Name}, hash: c.Seat.TokenHash, cancel: cancel}
	h.ctx = context.WithValue(hctx, holdKey{}, h)
	s.holds.mu.Lock()
	if s.holds.m == nil {
		s.holds.m = map[seatKey]map[*hold]struct{}{}
	}
	set := s.holds.m[h.key]
	if set == nil {
		set = map[*hold]struct{}{}
		s.holds.m[h.key] = set
	}
	set[h] = struct{}{}
	s.holds.mu.Unlock()
	context.AfterFunc(hctx, func() { s.unhold(h) })

	// Registered first, checked second: a change from now on reaches this hold by
	// notification, and one made before is seen here.
	if err := s.checkHold(ctx, h); err != nil {
		cancel(err)
		return nil, nil, err
	}
	return h.ctx, func() { cancel(context.Canceled) }, nil
}

func (s *Service) unhold(h *hold) {
	s.holds.mu.Lock()
	defer s.holds.mu.Unlock()
	set := s.holds.m[h.key]
	delete(set, h)
	if len(set) == 0 {
		delete(s.holds.m, h.key)
	}
}

// checkHold reads the hold's seat from the store and, when its token no longer matches,
// cancels the hold and returns why (EUNAUTHORIZED). Store failures are returned as they are;
// they cancel nothing.
func (s *Service) checkHold(ctx context.Context, h *hold) error {
	seat, err := s.store.Seat(ctx, h.key.room, h.key.seat)
	if err != nil && parley.ErrorCode(err) != parley.ENOTFOUND {
		return s.internal(ctx, "check token", err)
	}
	if cause := holdCause(seat, err, h); cause != nil {
		h.cancel(cause)
		return cause
	}
	return nil
}

// holdCause says why a hold's token is no longer valid, or nil when it still is.
func holdCause(seat *parley.Seat, err error, h *hold) error {
	switch {
	case err != nil:
		return parley.Errorf(parley.EUNAUTHORIZED, "seat %s of room %s no longer exists", h.key.seat, h.key.room).
			WithHint("ask the room's admin for a seat token")
	case !seat.Active():
		return parley.Errorf(parley.EUNAUTHORIZED, "the token of seat %s was revoked", h.key.seat).
			WithHint("revocation is for good; ask the room's admin for a new seat")
	case subtle.ConstantTimeCompare(seat.TokenHash, h.hash) != 1:
		return parley.Errorf(parley.EUNAUTHORIZED, "the token of seat %s was rotated; this one no longer works", h.key.seat).
			WithHint("use the new token the rotation returned")
	}
	return nil
}

// confirmHold is what a delivery under a held context calls after reading and before
// returning what it read: EUNAUTHORIZED if the hold was cancelled by a revocation or rotation,
// or if the store says the token stopped being valid. Without a hold it does nothing.
func (s *Service) confirmHold(ctx context.Context) error {
	h, _ := ctx.Value(holdKey{}).(*hold)
	if h == nil {
		return nil
	}
	if cause := context.Cause(h.ctx); cause != nil && parley.ErrorCode(cause) == parley.EUNAUTHORIZED {
		return cause
	}
	return s.checkHold(ctx, h)
}

// seatChanged checks the holds of one seat (or, for the zero SeatChange, of every seat)
// against the store, cancelling those whose token stopped being valid.
func (s *Service) seatChanged(ctx context.Context, ch parley.SeatChange) {
	var keys []seatKey
	s.holds.mu.Lock()
	if ch == (parley.SeatChange{}) {
		for k := range s.holds.m {
			keys = append(keys, k)
		}
	} else if _, ok := s.holds.m[seatKey{ch.Room, ch.Seat}]; ok {
		keys = append(keys, seatKey{ch.Room, ch.Seat})
	}
	s.holds.mu.Unlock()
	for _, k := range keys {
		seat, err := s.store.Seat(ctx, k.room, k.seat)
		if err != nil && parley.ErrorCode(err) != parley.ENOTFOUND {
			// The token cannot be confirmed: end its holds rather than keep serving a
			// token that may be revoked. Their clients reconnect and authenticate again.
			s.log.ErrorContext(ctx, "room: checking a seat after a change", "room", k.room, "seat", k.seat, "err", err)
			err = fmt.Errorf("check seat %s/%s: %w", k.room, k.seat, err)
			for _, h := range s.holdsOf(k) {
				h.cancel(err)
			}
			continue
		}
		for _, h := range s.holdsOf(k) {
			if cause := holdCause(seat, err, h); cause != nil {
				h.cancel(cause)
			}
		}
	}
}

func (s *Service) holdsOf(k seatKey) []*hold {
	s.holds.mu.Lock()
	defer s.holds.mu.Unlock()
	out := make([]*hold, 0, len(s.holds.m[k]))
	for h := range s.holds.m[k] {
		out = append(out, h)
	}
	return out
}

// followSeats applies the store's seat changes to the holds until the store closes.
func (s *Service) followSeats(changes <-chan parley.SeatChange) {
	for ch := range changes {
		ctx, cancel := context.WithTimeout(context.Background(), holdCheckTimeout)
		s.seatChanged(ctx, ch)
		cancel()
	}
}

// endHolds ends, before RevokeSeat or RotateSeat returns, the holds of the seat whose token
// this Service just revoked or replaced.
func (s *Service) endHolds(ctx context.Context, room, seat string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), holdCheckTimeout)
	defer cancel()
	s.seatChanged(ctx, parley.SeatChange{Room: room, Seat: seat})
}
