package room_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/sqlitetest"
	"github.com/parleyhq/parley/room"
	"github.com/parleyhq/parley/sqlite"
)

// comingStore is a real SQLite store that also counts the room service's announcements of
// posts on their way (PostsComing), and what was announced when each Append began.
type comingStore struct {
	*sqlite.Store
	net, announced atomic.Int64
	atAppend       []int64
}

func (s *comingStore) PostsComing(room string, delta int) {
	s.net.Add(int64(delta))
	if delta > 0 {
		s.announced.Add(1)
	}
	s.Store.PostsComing(room, delta)
}

func (s *comingStore) Append(ctx context.Context, a *parley.Append) (parley.Appended, error) {
	s.atAppend = append(s.atAppend, s.net.Load())
	return s.Store.Append(ctx, a)
}

// TestPostsComing: every post that passed authentication is announced to a store that hears
// of them, and withdrawn before its Append (which announces itself) or when it is refused
// before one; none is left announced, whatever the outcome.
func TestPostsComing(t *testing.T) {
	st := sqlitetest.Open(t)
	store := &comingStore{Store: st}
	svc, err := room.New(store, room.Config{AdminToken: adminToken, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	admin, _ := svc.Authenticate(t.Context(), adminToken)
	if _, err := svc.CreateRoom(t.Context(), admin, "r", nil); err != nil {
		t.Fatal(err)
	}
	_, tok, err := svc.AddSeat(t.Context(), admin, "r", "a", parley.RoleAgent)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := svc.Authenticate(t.Context(), tok)
	good := []byte("v1 note r to all n=1\nfact one\n")
	cases := []struct {
		what   string
		room   string
		body   []byte
		refuse string // the error code; "" = stored
	}{
		{"a post", "r", good, ""},
		{"its repeat, refused by the append", "r", good, parley.ECONFLICT},
		{"a malformed convention post", "r", []byte("v1 note\n"), parley.EINVALID},
		{"an empty post", "r", nil, parley.EINVALID},
		{"a post to another room", "s", good, parley.EFORBIDDEN},
	}
	for _, tc := range cases {
		before := store.announced.Load()
		_, err := svc.Post(t.Context(), c, tc.room, tc.body, "")
		if got := parley.ErrorCode(err); (tc.refuse == "") != (err == nil) || (err != nil && got != tc.refuse) {
			t.Fatalf("%s: %v (code %q), want code %q", tc.what, err, got, tc.refuse)
		}
		if n := store.net.Load(); n != 0 {
			t.Errorf("%s: %d posts left announced", tc.what, n)
		}
		// A post to a room its seat is not in fails authorisation: it is never announced.
		if want := int64(1); tc.room != "r" {
			if store.announced.Load() != before {
				t.Errorf("%s: announced", tc.what)
			}
		} else if got := store.announced.Load() - before; got != want {
			t.Errorf("%s: announced %d times, want %d", tc.what, got, want)
		}
	}
	if len(store.atAppend) != 2 {
		t.Fatalf("%d appends, want 2 (the post and its repeat)", len(store.atAppend))
	}
	for i, n := range store.atAppend {
		if n != 0 {
			t.Errorf("append %d began with %d posts still announced by the service", i, n)
		}
	}
}
