// Package storecount wraps a parley.Store and counts the calls made to it, by method: for
// tests that assert how many store reads a request costs. It knows nothing else; every call
// goes to the wrapped store unchanged. The wrapper hides the store's optional interfaces
// (parley.RateStore, parley.StorageFullDetector), so a service over it keeps its rate buckets
// in memory.
package storecount

import (
	"context"
	"sync"
	"time"

	"github.com/parleyhq/parley"
)

// Store is a parley.Store that counts its calls. A method it does not list (one added to
// parley.Store later) goes to the wrapped store uncounted.
type Store struct {
	parley.Store
	s  parley.Store
	mu sync.Mutex
	n  map[string]int
}

var _ parley.Store = (*Store)(nil)

// New wraps s.
func New(s parley.Store) *Store { return &Store{Store: s, s: s, n: map[string]int{}} }

func (c *Store) count(method string) {
	c.mu.Lock()
	c.n[method]++
	c.mu.Unlock()
}

// Counts returns the calls made since New or the last Reset, by method name.
func (c *Store) Counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.n))
	for k, v := range c.n {
		out[k] = v
	}
	return out
}

// Total returns the number of calls made since New or the last Reset.
func (c *Store) Total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := 0
	for _, v := range c.n {
		t += v
	}
	return t
}

// Reset starts counting from zero.
func (c *Store) Reset() {
	c.mu.Lock()
	clear(c.n)
	c.mu.Unlock()
}

func (c *Store) CreateRoom(ctx context.Context, r *parley.Room) error {
	c.count("CreateRoom")
	return c.s.CreateRoom(ctx, r)
}

func (c *Store) Room(ctx context.Context, name string) (*parley.Room, error) {
	c.count("Room")
	return c.s.Room(ctx, name)
}

func (c *Store) Rooms(ctx context.Context) ([]*parley.Room, error) {
	c.count("Rooms")
	return c.s.Rooms(ctx)
}

func (c *Store) UpdatePolicy(ctx context.Context, room string, p parley.Policy) error {
	c.count("UpdatePolicy")
	return c.s.UpdatePolicy(ctx, room, p)
}

func (c *Store) CreateSeat(ctx context.Context, s *parley.Seat) error {
	c.count("CreateSeat")
	return c.s.CreateSeat(ctx, s)
}

func (c *Store) Seat(ctx context.Context, room, name string) (*parley.Seat, error) {
	c.count("Seat")
	return c.s.Seat(ctx, room, name)
}

func (c *Store) SeatByToken(ctx context.Context, hash []byte) (*parley.Seat, error) {
	c.count("SeatByToken")
	return c.s.SeatByToken(ctx, hash)
}

func (c *Store) Seats(ctx context.Context, room string) ([]*parley.Seat, error) {
	c.count("Seats")
	return c.s.Seats(ctx, room)
}

func (c *Store) RevokeSeat(ctx context.Context, room, name string, t time.Time) error {
	c.count("RevokeSeat")
	return c.s.RevokeSeat(ctx, room, name, t)
}

func (c *Store) SetSeatToken(ctx context.Context, room, name string, hash []byte) error {
	c.count("SetSeatToken")
	return c.s.SetSeatToken(ctx, room, name, hash)
}

func (c *Store) Append(ctx context.Context, a *parley.Append) (parley.Appended, error) {
	c.count("Append")
	return c.s.Append(ctx, a)
}

func (c *Store) Messages(ctx context.Context, room string, after int64, limit int) ([]*parley.Message, error) {
	c.count("Messages")
	return c.s.Messages(ctx, room, after, limit)
}

func (c *Store) Message(ctx context.Context, room string, seq int64) (*parley.Message, error) {
	c.count("Message")
	return c.s.Message(ctx, room, seq)
}

func (c *Store) LastSeq(ctx context.Context, room string) (int64, error) {
	c.count("LastSeq")
	return c.s.LastSeq(ctx, room)
}

func (c *Store) ByIdempotencyKey(ctx context.Context, room, seat, key string) (*parley.Message, error) {
	c.count("ByIdempotencyKey")
	return c.s.ByIdempotencyKey(ctx, room, seat, key)
}

func (c *Store) Duplicate(ctx context.Context, room, seat string, hash []byte, since time.Time, n int) (int64, error) {
	c.count("Duplicate")
	return c.s.Duplicate(ctx, room, seat, hash, since, n)
}

func (c *Store) Asks(ctx context.Context, room, state string) ([]*parley.Ask, error) {
	c.count("Asks")
	return c.s.Asks(ctx, room, state)
}

func (c *Store) DueAsks(ctx context.Context, t time.Time) ([]*parley.Ask, error) {
	c.count("DueAsks")
	return c.s.DueAsks(ctx, t)
}

func (c *Store) NextDue(ctx context.Context) (time.Time, error) {
	c.count("NextDue")
	return c.s.NextDue(ctx)
}

func (c *Store) CreateRun(ctx context.Context, r *parley.Run) error {
	c.count("CreateRun")
	return c.s.CreateRun(ctx, r)
}

func (c *Store) Run(ctx context.Context, room, id string) (*parley.Run, error) {
	c.count("Run")
	return c.s.Run(ctx, room, id)
}

func (c *Store) AddStat(ctx context.Context, room, seat, key string, delta int64) error {
	c.count("AddStat")
	return c.s.AddStat(ctx, room, seat, key, delta)
}

func (c *Store) Stats(ctx context.Context, room string) (map[string]map[string]int64, error) {
	c.count("Stats")
	return c.s.Stats(ctx, room)
}

func (c *Store) Watch(ctx context.Context, room string) <-chan int64 {
	c.count("Watch")
	return c.s.Watch(ctx, room)
}

func (c *Store) WatchSeats(ctx context.Context) <-chan parley.SeatChange {
	c.count("WatchSeats")
	return c.s.WatchSeats(ctx)
}

// Close closes the wrapped store.
func (c *Store) Close() error { return c.s.Close() }
