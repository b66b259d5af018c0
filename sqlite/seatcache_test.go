package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/parleyhq/parley"
)

// TestSeatCacheSeesChanges reads a seat by name and by token (filling the cache), then
// revokes it, rotates its token and changes what a caller got back, and checks that every
// later read tells the truth of the database.
func TestSeatCacheSeesChanges(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "seats.db"), Sole())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Now().UTC().Truncate(time.Microsecond)
	if err := s.CreateRoom(ctx, &parley.Room{Name: "r", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	old, rotated := []byte("hash-one-32-bytes-long-----------"), []byte("hash-two-32-bytes-long-----------")
	if err := s.CreateSeat(ctx, &parley.Seat{Room: "r", Name: "a", Role: parley.RoleAgent, TokenHash: old, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second time from the cache
		st, err := s.SeatByToken(ctx, old)
		if err != nil || st.Name != "a" || !st.Active() {
			t.Fatalf("SeatByToken = %+v, %v", st, err)
		}
		if _, ok := s.seatCache.byTokenGet(old); !ok {
			t.Fatal("the seat read was not kept")
		}
		st.Name, st.TokenHash[0] = "changed by the caller", 'X' // must not reach the cache
		if st, err := s.Seat(ctx, "r", "a"); err != nil || st.Name != "a" || string(st.TokenHash) != string(old) {
			t.Fatalf("Seat = %+v, %v", st, err)
		}
	}
	if err := s.RevokeSeat(ctx, "r", "a", now); err != nil {
		t.Fatal(err)
	}
	if st, err := s.SeatByToken(ctx, old); err != nil || st.Active() {
		t.Fatalf("after revoke: SeatByToken = %+v, %v; want the seat, revoked", st, err)
	}
	if st, err := s.Seat(ctx, "r", "a"); err != nil || st.Active() {
		t.Fatalf("after revoke: Seat = %+v, %v; want revoked", st, err)
	}
	if err := s.SetSeatToken(ctx, "r", "a", rotated); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SeatByToken(ctx, old); parley.ErrorCode(err) != parley.ENOTFOUND {
		t.Fatalf("the rotated-away token: %v, want ENOTFOUND", err)
	}
	if st, err := s.SeatByToken(ctx, rotated); err != nil || st.Name != "a" {
		t.Fatalf("the new token: %+v, %v", st, err)
	}
}

// TestSeatCacheKeepsNothingStale checks the generation rule: a row read before a seat changed
// is not kept after it.
func TestSeatCacheKeepsNothingStale(t *testing.T) {
	c := seatCache{on: true}
	gen := c.generation()
	c.drop() // a revocation commits while the lookup reads
	c.keep(gen, &parley.Seat{Room: "r", Name: "a", TokenHash: []byte("h")})
	if _, ok := c.byNameGet("r", "a"); ok {
		t.Fatal("a row read before the change was kept")
	}
	c.keep(c.generation(), &parley.Seat{Room: "r", Name: "a", TokenHash: []byte("h")})
	if _, ok := c.byTokenGet([]byte("h")); !ok {
		t.Fatal("a row read after the change was not kept")
	}
}
