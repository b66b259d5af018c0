package sqlite

import (
	"context"
	"sync"
	"time"

	"github.com/parleyhq/parley"
)

// Every request authenticates its token (SeatByToken) and every post checks its seat again
// (Seat), two queries that return the same few rows all day. When this Store is the only
// writer of its file (Sole: `parley serve` holds the file's lock), every change to a seat
// passes here and the Store can keep the rows it has read: seatCache. A write to seats drops the whole cache
// after it commits, and bumps gen; a lookup that read the database stores its row only if
// gen did not move meanwhile, so a row read before a revocation committed can never be kept
// after it.

// seatCacheMax bounds the cache; past it, it starts over.
const seatCacheMax = 4096

type seatKey struct{ room, name string }

type seatCache struct {
	on      bool // Sole; off, every lookup reads the database
	mu      sync.Mutex
	gen     uint64
	byName  map[seatKey]parley.Seat
	byToken map[string]parley.Seat // by the token's hash
}

// seatCopy returns a copy the caller may change.
func seatCopy(st parley.Seat) *parley.Seat {
	if st.RevokedAt != nil {
		t := *st.RevokedAt
		st.RevokedAt = &t
	}
	st.TokenHash = append([]byte(nil), st.TokenHash...)
	return &st
}

// generation returns the generation a lookup must see unchanged to keep what it read.
func (c *seatCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// keep stores st under both keys if no seat changed since gen.
func (c *seatCache) keep(gen uint64, st *parley.Seat) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.on || c.gen != gen {
		return
	}
	if c.byName == nil || len(c.byName) >= seatCacheMax || len(c.byToken) >= seatCacheMax {
		c.byName, c.byToken = map[seatKey]parley.Seat{}, map[string]parley.Seat{}
	}
	v := *seatCopy(*st)
	c.byName[seatKey{st.Room, st.Name}] = v
	if len(st.TokenHash) > 0 {
		c.byToken[string(st.TokenHash)] = v
	}
}

// drop forgets every seat; called after every write to seats, committed or not.
func (c *seatCache) drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.byName, c.byToken = nil, nil
}

func (c *seatCache) byNameGet(room, name string) (*parley.Seat, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.byName[seatKey{room, name}]
	if !ok {
		return nil, false
	}
	return seatCopy(st), true
}

func (c *seatCache) byTokenGet(hash []byte) (*parley.Seat, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.byToken[string(hash)]
	if !ok {
		return nil, false
	}
	return seatCopy(st), true
}

// Option configures Open.
type Option func(*Store)

// Sole tells Open that this Store will be the only writer of its file for as long as it is
// open: no other Store, in this process or another, writes it (`parley serve` makes sure with
// its lock on PATH.lock). The Store then keeps in memory the seats it reads (answering Seat
// and SeatByToken from there until a seat changes), each seat's latest messages for dedup
// (dedup.go), each room's runs (runcache.go) and each room's last seq (seq.go). Without it, two Stores may share a file,
// SQLite's write lock serialising them, and every lookup reads the file.
func Sole() Option {
	return func(s *Store) { s.seatCache.on, s.dedup.on, s.runs.on, s.seqs.on = true, true, true, true }
}

// Seat returns one seat, revoked or not. ENOTFOUND.
func (s *Store) Seat(ctx context.Context, room, name string) (*parley.Seat, error) {
	if st, ok := s.seatCache.byNameGet(room, name); ok {
		return st, nil
	}
	gen := s.seatCache.generation()
	st, err := s.Tables.Seat(ctx, room, name)
	if err == nil {
		s.seatCache.keep(gen, st)
	}
	return st, err
}

// SeatByToken returns the seat whose token hashes to hash, revoked or not. ENOTFOUND.
func (s *Store) SeatByToken(ctx context.Context, hash []byte) (*parley.Seat, error) {
	if len(hash) > 0 {
		if st, ok := s.seatCache.byTokenGet(hash); ok {
			return st, nil
		}
	}
	gen := s.seatCache.generation()
	st, err := s.Tables.SeatByToken(ctx, hash)
	if err == nil {
		s.seatCache.keep(gen, st)
	}
	return st, err
}

// CreateSeat stores a new seat. ENOTFOUND for the room; ECONFLICT if the name is taken.
func (s *Store) CreateSeat(ctx context.Context, st *parley.Seat) error {
	defer s.seatCache.drop()
	return s.Tables.CreateSeat(ctx, st)
}

// RevokeSeat marks a seat revoked at t and tells this process's WatchSeats. ENOTFOUND.
func (s *Store) RevokeSeat(ctx context.Context, room, name string, t time.Time) error {
	err := s.Tables.RevokeSeat(ctx, room, name, t)
	s.seatCache.drop() // before WatchSeats hears of it: a hold that checks again must see it
	if err != nil {
		return err
	}
	s.seats.Publish(parley.SeatChange{Room: room, Seat: name})
	return nil
}

// SetSeatToken replaces a seat's token hash and tells this process's WatchSeats. ENOTFOUND.
func (s *Store) SetSeatToken(ctx context.Context, room, name string, hash []byte) error {
	err := s.Tables.SetSeatToken(ctx, room, name, hash)
	s.seatCache.drop()
	if err != nil {
		return err
	}
	s.seats.Publish(parley.SeatChange{Room: room, Seat: name})
	return nil
}
