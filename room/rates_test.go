package room_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/sqlitetest"
	"github.com/parleyhq/parley/room"
	"github.com/parleyhq/parley/sqlite"
)

// faultyStore fails appends on demand, or answers them as an Idempotency-Key race lost to
// another request that stored the post first.
type faultyStore struct {
	*sqlite.Store
	mode atomic.Value // "", "fail" or "race"
}

func (f *faultyStore) Append(ctx context.Context, a *parley.Append) (parley.Appended, error) {
	switch f.mode.Load() {
	case "fail":
		return parley.Appended{}, errors.New("disk on fire")
	case "race":
		m := *a.Message
		m.Seq = 1
		return parley.Appended{Message: &m, Replay: true}, nil
	}
	return f.Store.Append(ctx, a)
}

// TestRatesGiveBack checks what a post keeps of its rate allowance: a refusal costs the seat
// one message but leaves the room's, a server fault or a lost race costs nothing, and the
// wait refills one message a minute on the injected clock.
func TestRatesGiveBack(t *testing.T) {
	sq := sqlitetest.Open(t)
	st := &faultyStore{Store: sq}
	st.mode.Store("")
	clock := &Clock{t: time.Date(2026, 9, 17, 9, 0, 5, 0, time.UTC)}
	svc, err := room.New(st, room.Config{AdminToken: adminToken, Now: clock.Now, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	admin, _ := svc.Authenticate(t.Context(), adminToken)
	p := &parley.Policy{SeatMessagesPerMinute: 1, SeatBurst: 3, RoomMessagesPerMinute: 1, RoomBurst: 4}
	if _, err := svc.CreateRoom(t.Context(), admin, "r", p); err != nil {
		t.Fatal(err)
	}
	seat := map[string]*parley.Caller{}
	for _, name := range []string{"a", "b"} {
		_, tok, err := svc.AddSeat(t.Context(), admin, "r", name, parley.RoleAgent)
		if err != nil {
			t.Fatal(err)
		}
		seat[name], _ = svc.Authenticate(t.Context(), tok)
	}
	n := 0
	post := func(who string) error {
		n++
		_, err := svc.Post(t.Context(), seat[who], "r", fmt.Appendf(nil, "v1 note x to all n=1\nfact %d\n", n), "")
		return err
	}
	wantCode := func(err error, code string) {
		t.Helper()
		if parley.ErrorCode(err) != code {
			t.Fatalf("got %v, want %s", err, code)
		}
	}

	// Faults and lost races, however many, cost nothing.
	st.mode.Store("fail")
	for range 5 {
		wantCode(post("a"), parley.EINTERNAL)
	}
	st.mode.Store("race")
	for range 5 {
		if err := post("a"); err != nil {
			t.Fatalf("lost race: %v", err)
		}
	}
	st.mode.Store("")
	// A refusal costs a one of its three messages, and the room none.
	_, err = svc.Post(t.Context(), seat["a"], "r", []byte("not a message"), "")
	wantCode(err, parley.EINVALID)
	wantCode(post("a"), "")
	wantCode(post("a"), "")
	wantCode(post("a"), parley.ERATELIMIT)
	// The room had four: a stored two, b gets the other two.
	wantCode(post("b"), "")
	wantCode(post("b"), "")
	err = post("b")
	wantCode(err, parley.ERATELIMIT)
	if pe := err.(*parley.Error); pe.Fields["retry_after"] != 60 {
		t.Errorf("retry_after %v, want 60 at one message a minute", pe.Fields["retry_after"])
	}
	// A minute later the room and each seat have one more.
	clock.Advance(time.Minute)
	wantCode(post("a"), "")
	wantCode(post("b"), parley.ERATELIMIT)
	clock.Advance(time.Minute)
	wantCode(post("b"), "")
}
