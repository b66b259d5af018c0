package room

import (
	"context"
	"sync"
	"time"

	"github.com/parleyhq/parley"
)

// rosterTTL bounds how long a cached room (its policy and the names of its active seats)
// is used. This service drops its entry at once when it changes the room's policy or seats;
// the TTL only bounds what another server process on the same database (PostgreSQL) changed.
// Nothing that grants access comes from the cache: the posting seat is read fresh on every
// post (poster), so a revoked or rotated token stops working at once everywhere.
const rosterTTL = time.Second

// roster caches, per room, what every post reads but rarely changes: the room with its
// policy (defaults applied) and the names of its active seats (for addressing and acks).
// Reading them from the store was about a sixth of a post's cost.
type roster struct {
	mu  sync.Mutex
	m   map[string]rosterEntry
	gen map[string]uint64 // bumped by forget, so that a load racing a change is not kept
	// loading holds, per room, a channel closed when the load under way ends: when an
	// entry expires, the posts that find it so wait for one load instead of each making
	// their own (every seat of a busy room at once).
	loading map[string]chan struct{}
}

type rosterEntry struct {
	room   parley.Room
	seats  []string
	roster []string // seats and "all", in one array
	at     time.Time
}

// forget drops a room's cached entry; the next post reads the store.
func (s *Service) forgetRoster(room string) {
	s.roster.mu.Lock()
	defer s.roster.mu.Unlock()
	delete(s.roster.m, room)
	if s.roster.gen == nil {
		s.roster.gen = map[string]uint64{}
	}
	s.roster.gen[room]++
}

// postRoom returns the room (a copy the caller may change) and its active seat names, from
// the cache when fresh, and the roster of names a message may address: the seats and "all".
// Neither slice may be changed.
func (s *Service) postRoom(ctx context.Context, name string) (r *parley.Room, seats, roster []string, err error) {
	now := time.Now()
	s.roster.mu.Lock()
	e, ok := s.roster.m[name]
	gen := s.roster.gen[name]
	wait, busy := s.roster.loading[name]
	if !ok || now.Sub(e.at) >= rosterTTL || now.Sub(e.at) < 0 {
		ok = false
		if !busy {
			if s.roster.loading == nil {
				s.roster.loading = map[string]chan struct{}{}
			}
			done := make(chan struct{})
			s.roster.loading[name] = done
			defer func() {
				s.roster.mu.Lock()
				delete(s.roster.loading, name)
				s.roster.mu.Unlock()
				close(done)
			}()
		}
	}
	s.roster.mu.Unlock()
	if ok {
		r := e.room
		return &r, e.seats, e.roster, nil
	}
	if busy {
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, nil, nil, s.internal(ctx, "post: room", context.Cause(ctx))
		}
		s.roster.mu.Lock()
		e, ok := s.roster.m[name]
		s.roster.mu.Unlock()
		if ok && time.Since(e.at) < rosterTTL {
			r := e.room
			return &r, e.seats, e.roster, nil
		}
		// The load failed, or a change dropped what it read: read the store here.
	}
	r, err = s.room(ctx, name)
	if err != nil {
		return nil, nil, nil, err
	}
	active, err := s.activeSeats(ctx, name)
	if err != nil {
		return nil, nil, nil, err
	}
	// The roster, "all" included, built once per load; seats is the active seats' part, with
	// its capacity cut so that no append can write over the "all".
	roster = append(append(make([]string, 0, len(active)+1), active...), "all")
	seats = roster[:len(active):len(active)]
	s.roster.mu.Lock()
	if s.roster.gen[name] == gen {
		if s.roster.m == nil {
			s.roster.m = map[string]rosterEntry{}
		}
		s.roster.m[name] = rosterEntry{room: *r, seats: seats, roster: roster, at: now}
	}
	s.roster.mu.Unlock()
	return r, seats, roster, nil
}
