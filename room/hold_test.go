package room_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/sqlitetest"
	"github.com/parleyhq/parley/room"
	"github.com/parleyhq/parley/sqlite"
)

// deafStore is a real SQLite store whose own seat notifications never arrive: what a Service
// sees when another server on the same database revoked a token and the notice is late. The
// test sends what notices it wants on notes.
type deafStore struct {
	*sqlite.Store
	notes chan parley.SeatChange
}

func (s deafStore) WatchSeats(ctx context.Context) <-chan parley.SeatChange { return s.notes }

type holdFixture struct {
	svc   *room.Service
	store *sqlite.Store
	admin *parley.Caller
	notes chan parley.SeatChange // deaf: the notices the Service gets
}

func newHoldFixture(t *testing.T, deaf bool) *holdFixture {
	t.Helper()
	st := sqlitetest.Open(t)
	var store parley.Store = st
	notes := make(chan parley.SeatChange, 1)
	if deaf {
		store = deafStore{st, notes}
	}
	svc, err := room.New(store, room.Config{AdminToken: adminToken, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	admin, err := svc.Authenticate(t.Context(), adminToken)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateRoom(t.Context(), admin, "r", nil); err != nil {
		t.Fatal(err)
	}
	return &holdFixture{svc: svc, store: st, admin: admin, notes: notes}
}

func (f *holdFixture) seat(t *testing.T, name string) (*parley.Caller, string) {
	t.Helper()
	_, tok, err := f.svc.AddSeat(t.Context(), f.admin, "r", name, parley.RoleAgent)
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.svc.Authenticate(t.Context(), tok)
	if err != nil {
		t.Fatal(err)
	}
	return c, tok
}

func (f *holdFixture) post(t *testing.T, c *parley.Caller, fact string) {
	t.Helper()
	if _, err := f.svc.Post(t.Context(), c, "r", []byte("v1 note r to all n=1\nfact "+fact+"\n"), ""); err != nil {
		t.Fatal(err)
	}
}

func wantUnauthorized(t *testing.T, what string, err error, phrase string) {
	t.Helper()
	if parley.ErrorCode(err) != parley.EUNAUTHORIZED || !strings.Contains(parley.ErrorMessage(err), phrase) {
		t.Fatalf("%s: %v, want unauthorized with %q", what, err, phrase)
	}
}

// TestHoldEndsAtRevocation: revoking through the Service cancels the seat's holds before
// RevokeSeat returns, with the reason as the cause; other seats' holds go on.
func TestHoldEndsAtRevocation(t *testing.T) {
	f := newHoldFixture(t, false)
	v, _ := f.seat(t, "v")
	w, _ := f.seat(t, "w")
	vctx, vcancel, err := f.svc.Hold(t.Context(), v)
	if err != nil {
		t.Fatal(err)
	}
	defer vcancel()
	wctx, wcancel, err := f.svc.Hold(t.Context(), w)
	if err != nil {
		t.Fatal(err)
	}
	defer wcancel()
	actx, acancel, err := f.svc.Hold(t.Context(), f.admin)
	if err != nil {
		t.Fatal(err)
	}
	defer acancel()
	if err := f.svc.RevokeSeat(t.Context(), f.admin, "r", "v"); err != nil {
		t.Fatal(err)
	}
	if vctx.Err() == nil {
		t.Fatal("the revoked seat's hold survived RevokeSeat")
	}
	wantUnauthorized(t, "cause", context.Cause(vctx), "the token of seat v was revoked")
	if wctx.Err() != nil || actx.Err() != nil {
		t.Fatal("another seat's or the admin's hold ended with v's revocation")
	}
	_, _, err = f.svc.Hold(t.Context(), v)
	wantUnauthorized(t, "a hold of the revoked token", err, "the token of seat v was revoked")
}

// TestHoldRotation: rotation ends the old token's holds, not those of the new token, even when
// the notice of the rotation comes after the new token took its hold.
func TestHoldRotation(t *testing.T) {
	f := newHoldFixture(t, false)
	v, _ := f.seat(t, "v")
	old, cancel, err := f.svc.Hold(t.Context(), v)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	tok, err := f.svc.RotateSeat(t.Context(), f.admin, "r", "v")
	if err != nil {
		t.Fatal(err)
	}
	wantUnauthorized(t, "old token's hold", context.Cause(old), "the token of seat v was rotated")
	nv, err := f.svc.Authenticate(t.Context(), tok)
	if err != nil {
		t.Fatal(err)
	}
	nctx, ncancel, err := f.svc.Hold(t.Context(), nv)
	if err != nil {
		t.Fatal(err)
	}
	defer ncancel()
	// A late (or repeated) notice of that rotation, as another server's would be.
	if err := f.store.SetSeatToken(t.Context(), "r", "v", nv.Seat.TokenHash); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if nctx.Err() != nil {
		t.Fatalf("the new token's hold ended on a notice of the rotation that made it: %v", context.Cause(nctx))
	}
}

// TestHoldNotified: a revocation made past the Service (another server on the database) ends
// the hold through the store's notification.
func TestHoldNotified(t *testing.T) {
	f := newHoldFixture(t, false)
	v, _ := f.seat(t, "v")
	vctx, cancel, err := f.svc.Hold(t.Context(), v)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	if err := f.store.RevokeSeat(t.Context(), "r", "v", time.Now()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-vctx.Done():
		wantUnauthorized(t, "cause", context.Cause(vctx), "was revoked")
	case <-time.After(time.Second):
		t.Fatal("the hold outlived a revocation notified by the store by 1s")
	}
}

// TestHoldHistoryAfterLateRevocation: when the notice of a revocation has not arrived, History
// under the hold still returns nothing posted after it: it confirms the token after reading.
func TestHoldHistoryAfterLateRevocation(t *testing.T) {
	f := newHoldFixture(t, true)
	v, _ := f.seat(t, "v")
	w, _ := f.seat(t, "w")
	f.post(t, w, "before")
	vctx, cancel, err := f.svc.Hold(t.Context(), v)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	if _, last, err := f.svc.History(vctx, v, "r", 0, 0); err != nil || last != 1 {
		t.Fatalf("history while the token is good: last %d, %v", last, err)
	}
	// Another server revokes v (no notice reaches this one), then w posts.
	if err := f.store.RevokeSeat(t.Context(), "r", "v", time.Now()); err != nil {
		t.Fatal(err)
	}
	f.post(t, w, "after the revocation")
	text, last, err := f.svc.History(vctx, v, "r", 1, 0)
	wantUnauthorized(t, "history after the revocation", err, "the token of seat v was revoked")
	if len(text) != 0 || last != 0 {
		t.Fatalf("history returned %q (last %d) after the revocation", text, last)
	}
	if vctx.Err() == nil {
		t.Error("the hold was not ended by the revocation History found")
	}
	// Without a hold, History is as before: the caller was authenticated by the edge.
	if _, last, err := f.svc.History(t.Context(), w, "r", 0, 0); err != nil || last != 2 {
		t.Fatalf("history of another seat: last %d, %v", last, err)
	}
}

// TestHoldRecheckAll: the zero SeatChange (notices may have been lost) checks every held
// seat again.
func TestHoldRecheckAll(t *testing.T) {
	f := newHoldFixture(t, true)
	v, _ := f.seat(t, "v")
	w, _ := f.seat(t, "w")
	vctx, vcancel, err := f.svc.Hold(t.Context(), v)
	if err != nil {
		t.Fatal(err)
	}
	defer vcancel()
	wctx, wcancel, err := f.svc.Hold(t.Context(), w)
	if err != nil {
		t.Fatal(err)
	}
	defer wcancel()
	if err := f.store.RevokeSeat(t.Context(), "r", "v", time.Now()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if vctx.Err() != nil {
		t.Fatal("the deaf store told the Service after all")
	}
	f.notes <- parley.SeatChange{}
	select {
	case <-vctx.Done():
		wantUnauthorized(t, "cause", context.Cause(vctx), "the token of seat v was revoked")
	case <-time.After(time.Second):
		t.Fatal("the hold outlived \"check every seat\" by 1s")
	}
	if wctx.Err() != nil {
		t.Error("a good token's hold ended on \"check every seat\"")
	}
}
