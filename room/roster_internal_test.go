package room

import (
	"context"
	"github.com/parleyhq/parley/internal/sqlitetest"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/sqlite"
)

// seatCounter counts the store's roster reads, and can hold them until released.
type seatCounter struct {
	*sqlite.Store
	reads atomic.Int64
	gate  chan struct{} // nil: reads go through at once
}

func (c *seatCounter) Seats(ctx context.Context, room string) ([]*parley.Seat, error) {
	c.reads.Add(1)
	if c.gate != nil {
		<-c.gate
	}
	return c.Store.Seats(ctx, room)
}

// TestRosterOneLoad: when the cached roster has expired, posts that need it at once wait for
// one read of the store and all get what it read; a change made here still shows at once.
func TestRosterOneLoad(t *testing.T) {
	ctx := context.Background()
	sq := sqlitetest.Open(t)
	st := &seatCounter{Store: sq}
	s, err := New(st, Config{AdminToken: "the-admin-token-of-this-test", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	admin, _ := s.Authenticate(ctx, "the-admin-token-of-this-test")
	if _, err := s.CreateRoom(ctx, admin, "r", nil); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b"} {
		if _, _, err := s.AddSeat(ctx, admin, "r", n, parley.RoleAgent); err != nil {
			t.Fatal(err)
		}
	}

	st.gate = make(chan struct{})
	st.reads.Store(0)
	const n = 16
	var wg sync.WaitGroup
	got := make([][]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, seats, roster, err := s.postRoom(ctx, "r")
			got[i], errs[i] = seats, err
			if err == nil && !slices.Equal(roster, append(slices.Clone(seats), "all")) {
				t.Errorf("roster %v for seats %v", roster, seats)
			}
		})
	}
	// Let every caller arrive while the first read is held, then release it.
	time.Sleep(100 * time.Millisecond)
	close(st.gate)
	wg.Wait()
	st.gate = nil
	if r := st.reads.Load(); r != 1 {
		t.Errorf("%d concurrent posts read the roster %d times, want once", n, r)
	}
	for i := range n {
		if errs[i] != nil || !slices.Equal(got[i], []string{"a", "b"}) {
			t.Errorf("caller %d: %v, %v", i, got[i], errs[i])
		}
	}

	// A seat added through the service is seen by the next post, cached or not.
	if _, _, err := s.AddSeat(ctx, admin, "r", "c", parley.RoleAgent); err != nil {
		t.Fatal(err)
	}
	if _, seats, _, err := s.postRoom(ctx, "r"); err != nil || !slices.Equal(seats, []string{"a", "b", "c"}) {
		t.Errorf("after adding c: %v, %v", seats, err)
	}
}
