package storetest

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/parleyhq/parley"
)

// ArchiveOf reads a whole room from s as an export holds it: what Store.ImportRoom takes.
func ArchiveOf(t testing.TB, s parley.Store, room string) *parley.RoomArchive {
	t.Helper()
	c := context.Background()
	a := &parley.RoomArchive{}
	var err error
	if a.Room, err = s.Room(c, room); err != nil {
		t.Fatalf("Room: %v", err)
	}
	if a.Seats, err = s.Seats(c, room); err != nil {
		t.Fatalf("Seats: %v", err)
	}
	if a.Messages, err = s.Messages(c, room, 0, 0); err != nil {
		t.Fatalf("Messages: %v", err)
	}
	if a.Asks, err = s.Asks(c, room, ""); err != nil {
		t.Fatalf("Asks: %v", err)
	}
	if a.Runs, err = s.Runs(c, room); err != nil {
		t.Fatalf("Runs: %v", err)
	}
	if a.Stats, err = s.Stats(c, room); err != nil {
		t.Fatalf("Stats: %v", err)
	}
	return a
}

// renamed returns a copy of a whose every record names room.
func renamed(a *parley.RoomArchive, room string) *parley.RoomArchive {
	b := &parley.RoomArchive{Stats: a.Stats}
	r := *a.Room
	r.Name = room
	b.Room = &r
	for _, v := range a.Seats {
		c := *v
		c.Room, c.TokenHash = room, nil
		b.Seats = append(b.Seats, &c)
	}
	for _, v := range a.Messages {
		c := *v
		c.Room = room
		b.Messages = append(b.Messages, &c)
	}
	for _, v := range a.Asks {
		c := *v
		c.Room = room
		b.Asks = append(b.Asks, &c)
	}
	for _, v := range a.Runs {
		c := *v
		c.Room = room
		b.Runs = append(b.Runs, &c)
	}
	return b
}

// exampleRoom fills room with what an import must carry: seats (one revoked), messages with
// notes, topics, re and an idempotency key, asks open, answered and lapsed, runs and counters.
func exampleRoom(t *testing.T, s parley.Store, room string) {
	MustCreateRoom(t, s, room)
	MustCreateSeat(t, s, room, "alice")
	MustCreateSeat(t, s, room, "bob")
	if err := s.RevokeSeat(ctx(t), room, "bob", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	due := t0.Add(time.Minute)
	m1 := msg(room, "alice", "ask bob: ready?\nask bob: which port?")
	m1.Notes = []string{"evidence: verified", "a \u0000 note"}
	m1.IdempotencyKey = "k-1"
	MustAppend(t, s, &parley.Append{Message: m1, Asks: []*parley.Ask{
		{Line: 1, To: "bob", Topic: "limiter", Text: "ready?", Due: &due, Default: "yes", Decider: "alice"},
		{Line: 2, To: "bob", Topic: "limiter", Text: "which port?"},
	}})
	m2 := msg(room, "bob", "re 1: yes")
	m2.Re, m2.Time = 1, t0.Add(time.Second)
	MustAppend(t, s, &parley.Append{Message: m2, Answers: []int64{1}})
	m3 := msg(room, "alice", "ask bob: and the limit?")
	m3.Topic = "other"
	MustAppend(t, s, &parley.Append{Message: m3, Asks: []*parley.Ask{{Line: 1, To: "bob", Topic: "other", Text: "and the limit?"}}})
	asks, err := s.Asks(ctx(t), room, parley.AskOpen)
	if err != nil || len(asks) == 0 {
		t.Fatalf("Asks: %v %v", asks, err)
	}
	m4 := msg(room, parley.SystemSeat, "lapsed")
	m4.Hash = nil
	MustAppend(t, s, &parley.Append{Message: m4, Lapses: asks[len(asks)-1]})
	if err := s.CreateRun(ctx(t), &parley.Run{Room: room, ID: "ci-1", Commit: "abc", Passed: 3, Seat: "alice", Time: t0}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddStat(ctx(t), room, "alice", "read_tokens", 42); err != nil {
		t.Fatal(err)
	}
}

func testImportRoom(t *testing.T, s parley.Store) {
	exampleRoom(t, s, "src")
	src := ArchiveOf(t, s, "src")
	if len(src.Messages) != 4 || len(src.Asks) != 3 || len(src.Runs) != 1 || len(src.Seats) != 2 {
		t.Fatalf("the example room holds %d messages, %d asks, %d runs, %d seats", len(src.Messages), len(src.Asks), len(src.Runs), len(src.Seats))
	}
	if err := s.ImportRoom(ctx(t), renamed(src, "dst")); err != nil {
		t.Fatalf("ImportRoom: %v", err)
	}
	got := ArchiveOf(t, s, "dst")
	want := renamed(src, "dst")
	if !reflect.DeepEqual(got.Room, want.Room) {
		t.Errorf("room = %+v, want %+v", got.Room, want.Room)
	}
	for name, pair := range map[string][2]any{
		"seats": {got.Seats, want.Seats}, "messages": {got.Messages, want.Messages},
		"asks": {got.Asks, want.Asks}, "runs": {got.Runs, want.Runs}, "stats": {got.Stats, want.Stats},
	} {
		if !reflect.DeepEqual(pair[0], pair[1]) {
			t.Errorf("imported %s differ:\n got %s\nwant %s", name, dump(pair[0]), dump(pair[1]))
		}
	}
	wantLastSeq(t, s, "dst", 4)
	// The room goes on where it stopped, and the imported key and hash still count.
	if m := post(t, s, "dst", "alice", "next"); m.Seq != 5 {
		t.Fatalf("the first post after the import is #%d, want #5", m.Seq)
	}
	res, err := s.Append(ctx(t), &parley.Append{Message: &parley.Message{Room: "dst", Seat: "alice", Time: t0, Format: "text", Body: "again", IdempotencyKey: "k-1"}})
	if err != nil || !res.Replay || res.Seq != 1 {
		t.Fatalf("a post with the imported Idempotency-Key: %+v, %v; want a replay of #1", res, err)
	}
	if orig, err := s.Duplicate(ctx(t), "dst", "alice", src.Messages[0].Hash, time.Time{}, 10); err != nil || orig != 1 {
		t.Fatalf("Duplicate of the imported #1 = %d, %v", orig, err)
	}
	// An imported seat has no token until rotated.
	for _, st := range got.Seats {
		if len(st.TokenHash) != 0 {
			t.Errorf("imported seat %s has a token hash", st.Name)
		}
	}

	wantCode(t, "ImportRoom(existing room)", s.ImportRoom(ctx(t), renamed(src, "dst")), parley.ECONFLICT)
	wantCode(t, "ImportRoom(the source room)", s.ImportRoom(ctx(t), src), parley.ECONFLICT)

	// A broken archive stores nothing.
	gap := renamed(src, "gap")
	gap.Messages = append(gap.Messages[:1:1], gap.Messages[2:]...)
	wantCode(t, "ImportRoom(gap in seqs)", s.ImportRoom(ctx(t), gap), parley.EINVALID)
	orphan := renamed(src, "orphan")
	orphan.Asks = append(orphan.Asks, &parley.Ask{Room: "orphan", Seq: 9, Line: 1, From: "alice", To: "bob", State: parley.AskOpen})
	wantCode(t, "ImportRoom(ask of no message)", s.ImportRoom(ctx(t), orphan), parley.EINVALID)
	twice := renamed(src, "twice")
	twice.Runs = append(twice.Runs, twice.Runs[0])
	wantCode(t, "ImportRoom(run twice)", s.ImportRoom(ctx(t), twice), parley.EINVALID)
	for _, room := range []string{"gap", "orphan", "twice"} {
		_, err := s.Room(ctx(t), room)
		wantCode(t, "Room("+room+") after a refused import", err, parley.ENOTFOUND)
		if msgs, err := s.Messages(ctx(t), room, 0, 0); err != nil || len(msgs) != 0 {
			t.Errorf("room %s: %d messages left after a refused import (%v)", room, len(msgs), err)
		}
	}

	// An empty room imports too.
	MustCreateRoom(t, s, "empty")
	if err := s.ImportRoom(ctx(t), renamed(ArchiveOf(t, s, "empty"), "empty2")); err != nil {
		t.Fatalf("ImportRoom(empty): %v", err)
	}
	wantLastSeq(t, s, "empty2", 0)
}

func dump(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
