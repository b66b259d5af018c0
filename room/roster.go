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
}

type rosterEntry struct {
	room  parley.Room
	seats []string
	at    time.Time
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
// the cache when fresh. The seat names slice must not be changed.
func (s *Service) postRoom(ctx context.Context, name string) (*parley.Room, []string, error) {
	now := time.Now()
	s.roster.mu.Lock()
	e, ok := s.roster.m[name]
	gen := s.roster.gen[name]
	s.roster.mu.Unlock()
	if ok && now.Sub(e.at) < rosterTTL && now.Sub(e.at) >= 0 {
		r := e.room
		return &r, e.seats, nil
	}
	r, err := s.room(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	seats, err := s.activeSeats(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	s.roster.mu.Lock()
	if s.roster.gen[name] == gen {
		if s.roster.m == nil {
			s.roster.m = map[string]rosterEntry{}
		}
		s.roster.m[name] = rosterEntry{room: *r, seats: seats, at: now}
	}
	s.roster.mu.Unlock()
	return r, seats, nil
}
