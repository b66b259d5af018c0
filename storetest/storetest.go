// Package storetest is the one conformance suite that every parley.Store implementation must
// pass: sqlite.Store and postgres.Store run it from their own tests against a real database.
//
// The suite checks the contract written on parley.Store, including the error codes, and the
// promises the room server builds on: gapless per-room seqs under concurrency, bodies that come
// back byte for byte, times that come back identical (UTC, to the microsecond), idempotent
// replays and dedup that store nothing and use up no seq, and asks that open, close by answer
// or lapse exactly once.
//
// A store's tests call it with a function that opens a new, empty store:
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) parley.Store { return MustOpen(t) })
//	}
//
// RunShared checks two stores on one database, as two server processes hold them, and the
// Bench functions give every store the same benchmarks.
package storetest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley"
)

// Open returns a new, empty store and arranges for it to be closed with t.Cleanup.
type Open func(t *testing.T) parley.Store

// Run runs the suite; every subtest gets a store of its own from open.
func Run(t *testing.T, open Open) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s parley.Store)
	}{
		{"Rooms", testRooms},
		{"Seats", testSeats},
		{"Append", testAppend},
		{"AppendErrors", testAppendErrors},
		{"GaplessConcurrent", testGaplessConcurrent},
		{"GaplessConcurrentRefusals", testGaplessConcurrentRefusals},
		{"BodyBytesExact", testBodyBytesExact},
		{"TimeRoundTrip", testTimeRoundTrip},
		{"Idempotency", testIdempotency},
		{"Poster", testPoster},
		{"DedupWindow", testDedupWindow},
		{"DedupLastN", testDedupLastN},
		{"Asks", testAsks},
		{"AsksAnsweredOnlyByAddressee", testAsksAddressee},
		{"AsksOrder", testAsksOrder},
		{"DueAsksAcrossRooms", testDueAsksAcrossRooms},
		{"DueAtZeroTime", testDueAtZeroTime},
		{"Runs", testRuns},
		{"Stats", testStats},
		{"Watch", testWatch},
		{"WatchSeats", testWatchSeats},
		{"Paging", testPaging},
		{"TopicMessages", testTopicMessages},
		{"TopicAsks", testTopicAsks},
		{"EmptyLists", testEmptyLists},
		{"ImportRoom", testImportRoom},
		{"Search", testSearch},
		{"CloseEndsWatch", testCloseEndsWatch}, // last: it closes the store
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, open(t))
		})
	}
}

// t0 has microseconds, the precision every store keeps.
var t0 = time.Date(2026, 9, 19, 12, 0, 0, 123456000, time.UTC)

func ctx(t *testing.T) context.Context { return t.Context() }

// MustCreateRoom creates a room with the default policy, created at t0.
func MustCreateRoom(t testing.TB, s parley.Store, name string) *parley.Room {
	t.Helper()
	r := &parley.Room{Name: name, Policy: parley.DefaultPolicy(), CreatedAt: t0}
	if err := s.CreateRoom(context.Background(), r); err != nil {
		t.Fatalf("CreateRoom(%q): %v", name, err)
	}
	return r
}

// MustCreateSeat creates an agent seat whose token hash is the SHA-256 of "token-<room>-<name>".
func MustCreateSeat(t testing.TB, s parley.Store, room, name string) *parley.Seat {
	t.Helper()
	st := &parley.Seat{Room: room, Name: name, Role: parley.RoleAgent, TokenHash: tokenHash(room, name), CreatedAt: t0}
	if err := s.CreateSeat(context.Background(), st); err != nil {
		t.Fatalf("CreateSeat(%q, %q): %v", room, name, err)
	}
	return st
}

func tokenHash(room, name string) []byte {
	h := sha256.Sum256([]byte("token-" + room + "-" + name))
	return h[:]
}

func hash(body string) []byte {
	h := sha256.Sum256([]byte(body))
	return h[:]
}

// msg returns a convention message by seat with body, hashed, at t0.
func msg(room, seat, body string) *parley.Message {
	return &parley.Message{
		Room: room, Seat: seat, Time: t0, Format: parley.FormatConvention,
		Topic: "limiter", Intent: "report", Body: body, Tokens: len(body) / 4, Hash: hash(body),
	}
}

// MustAppend appends a and fails the test on any error.
func MustAppend(t testing.TB, s parley.Store, a *parley.Append) *parley.Message {
	t.Helper()
	res, err := s.Append(context.Background(), a)
	if err != nil {
		t.Fatalf("Append(%s: %q): %v", a.Message.Seat, a.Message.Body, err)
	}
	if res.Replay {
		t.Fatalf("Append(%s: %q): a replay of #%d", a.Message.Seat, a.Message.Body, res.Seq)
	}
	return res.Message
}

func post(t testing.TB, s parley.Store, room, seat, body string) *parley.Message {
	t.Helper()
	return MustAppend(t, s, &parley.Append{Message: msg(room, seat, body)})
}

func wantCode(t testing.TB, what string, err error, code string) {
	t.Helper()
	if got := parley.ErrorCode(err); got != code {
		t.Fatalf("%s: error code %q (%v), want %q", what, got, err, code)
	}
}

func wantLastSeq(t testing.TB, s parley.Store, room string, want int64) {
	t.Helper()
	got, err := s.LastSeq(context.Background(), room)
	if err != nil {
		t.Fatalf("LastSeq(%q): %v", room, err)
	}
	if got != want {
		t.Fatalf("LastSeq(%q) = %d, want %d", room, got, want)
	}
}

func testRooms(t *testing.T, s parley.Store) {
	p := parley.DefaultPolicy()
	p.Format = parley.PolicyLenient
	p.DedupWindow = parley.Duration(90 * time.Minute)
	p.SeatMessagesPerMinute = 2.5
	r := &parley.Room{Name: "limiter", Policy: p, CreatedAt: t0}
	if err := s.CreateRoom(ctx(t), r); err != nil {
		t.Fatalf("CreateRoom: %v", err)
	}
	got, err := s.Room(ctx(t), "limiter")
	if err != nil {
		t.Fatalf("Room: %v", err)
	}
	if !reflect.DeepEqual(got, r) {
		t.Fatalf("Room = %+v, want %+v", got, r)
	}

	err = s.CreateRoom(ctx(t), &parley.Room{Name: "limiter", Policy: parley.DefaultPolicy(), CreatedAt: t0})
	wantCode(t, "CreateRoom(taken name)", err, parley.ECONFLICT)
	_, err = s.Room(ctx(t), "nosuch")
	wantCode(t, "Room(nosuch)", err, parley.ENOTFOUND)

	MustCreateRoom(t, s, "alpha")
	MustCreateRoom(t, s, "zulu")
	rooms, err := s.Rooms(ctx(t))
	if err != nil {
		t.Fatalf("Rooms: %v", err)
	}
	var names []string
	for _, r := range rooms {
		names = append(names, r.Name)
	}
	if want := []string{"alpha", "limiter", "zulu"}; !slices.Equal(names, want) {
		t.Fatalf("Rooms = %v, want %v", names, want)
	}

	p2 := parley.DefaultPolicy()
	p2.MaxMessageBytes = 4096
	if err := s.UpdatePolicy(ctx(t), "alpha", p2); err != nil {
		t.Fatalf("UpdatePolicy: %v", err)
	}
	got, err = s.Room(ctx(t), "alpha")
	if err != nil {
		t.Fatalf("Room: %v", err)
	}
	if got.Policy != p2 {
		t.Fatalf("policy after update = %+v, want %+v", got.Policy, p2)
	}
	wantCode(t, "UpdatePolicy(nosuch)", s.UpdatePolicy(ctx(t), "nosuch", p2), parley.ENOTFOUND)
	wantLastSeq(t, s, "alpha", 0)
	_, err = s.LastSeq(ctx(t), "nosuch")
	wantCode(t, "LastSeq(nosuch)", err, parley.ENOTFOUND)
}

func testSeats(t *testing.T, s parley.Store) {
	MustCreateRoom(t, s, "limiter")
	MustCreateRoom(t, s, "other")
	bob := &parley.Seat{Room: "limiter", Name: "bob", Role: parley.RoleRunner, TokenHash: tokenHash("limiter", "bob"), CreatedAt: t0}
	if err := s.CreateSeat(ctx(t), bob); err != nil {
		t.Fatalf("CreateSeat: %v", err)
	}
	MustCreateSeat(t, s, "limiter", "alice")
	MustCreateSeat(t, s, "other", "bob") // names are per room

	got, err := s.Seat(ctx(t), "limiter", "bob")
	if err != nil {
		t.Fatalf("Seat: %v", err)
	}
	if !reflect.DeepEqual(got, bob) || !got.Active() {
		t.Fatalf("Seat = %+v, want %+v (active)", got, bob)
	}
	got, err = s.SeatByToken(ctx(t), tokenHash("limiter", "bob"))
	if err != nil {
		t.Fatalf("SeatByToken: %v", err)
	}
	if got.Room != "limiter" || got.Name != "bob" {
		t.Fatalf("SeatByToken = %s/%s, want limiter/bob", got.Room, got.Name)
	}
	_, err = s.SeatByToken(ctx(t), tokenHash("limiter", "nobody"))
	wantCode(t, "SeatByToken(unknown)", err, parley.ENOTFOUND)
	_, err = s.Seat(ctx(t), "limiter", "carol")
	wantCode(t, "Seat(unknown)", err, parley.ENOTFOUND)

	err = s.CreateSeat(ctx(t), &parley.Seat{Room: "nosuch", Name: "bob", Role: parley.RoleAgent, TokenHash: tokenHash("nosuch", "bob"), CreatedAt: t0})
	wantCode(t, "CreateSeat(no room)", err, parley.ENOTFOUND)
	err = s.CreateSeat(ctx(t), &parley.Seat{Room: "limiter", Name: "bob", Role: parley.RoleAgent, TokenHash: tokenHash("limiter", "bob2"), CreatedAt: t0})
	wantCode(t, "CreateSeat(taken name)", err, parley.ECONFLICT)

	// Revoked seats stay, keep their name, and are still found by token (to say "revoked").
	revokedAt := t0.Add(time.Hour)
	if err := s.RevokeSeat(ctx(t), "limiter", "bob", revokedAt); err != nil {
		t.Fatalf("RevokeSeat: %v", err)
	}
	got, err = s.SeatByToken(ctx(t), tokenHash("limiter", "bob"))
	if err != nil {
		t.Fatalf("SeatByToken(revoked): %v", err)
	}
	if got.Active() || !got.RevokedAt.Equal(revokedAt) {
		t.Fatalf("revoked seat: RevokedAt = %v, want %v", got.RevokedAt, revokedAt)
	}
	err = s.CreateSeat(ctx(t), &parley.Seat{Room: "limiter", Name: "bob", Role: parley.RoleAgent, TokenHash: tokenHash("limiter", "bob3"), CreatedAt: t0})
	wantCode(t, "CreateSeat(name of revoked seat)", err, parley.ECONFLICT)
	wantCode(t, "RevokeSeat(unknown)", s.RevokeSeat(ctx(t), "limiter", "carol", revokedAt), parley.ENOTFOUND)

	seats, err := s.Seats(ctx(t), "limiter")
	if err != nil {
		t.Fatalf("Seats: %v", err)
	}
	if len(seats) != 2 || seats[0].Name != "alice" || seats[1].Name != "bob" || seats[1].Active() {
		t.Fatalf("Seats = %+v, want alice, bob (revoked)", seats)
	}
	if seats, err := s.Seats(ctx(t), "nosuch"); err != nil || len(seats) != 0 {
		t.Fatalf("Seats(nosuch) = %v, %v, want none", seats, err)
	}

	// Rotation: the old token stops working, the new one finds the seat.
	newHash := tokenHash("limiter", "alice-rotated")
	if err := s.SetSeatToken(ctx(t), "limiter", "alice", newHash); err != nil {
		t.Fatalf("SetSeatToken: %v", err)
	}
	_, err = s.SeatByToken(ctx(t), tokenHash("limiter", "alice"))
	wantCode(t, "SeatByToken(old token)", err, parley.ENOTFOUND)
	got, err = s.SeatByToken(ctx(t), newHash)
	if err != nil || got.Name != "alice" {
		t.Fatalf("SeatByToken(new token) = %+v, %v, want alice", got, err)
	}
	wantCode(t, "SetSeatToken(unknown)", s.SetSeatToken(ctx(t), "limiter", "carol", newHash), parley.ENOTFOUND)

	// A token belongs to one seat on the whole server; seats without one never match.
	err = s.CreateSeat(ctx(t), &parley.Seat{Room: "other", Name: "mallory", Role: parley.RoleAgent, TokenHash: newHash, CreatedAt: t0})
	wantCode(t, "CreateSeat(another seat's token)", err, parley.ECONFLICT)
	wantCode(t, "SetSeatToken(another seat's token)", s.SetSeatToken(ctx(t), "other", "bob", newHash), parley.ECONFLICT)
	for _, name := range []string{"t1", "t2"} {
		if err := s.CreateSeat(ctx(t), &parley.Seat{Room: "other", Name: name, Role: parley.RoleHuman, CreatedAt: t0}); err != nil {
			t.Fatalf("CreateSeat without a token: %v", err)
		}
	}
	_, err = s.SeatByToken(ctx(t), nil)
	wantCode(t, "SeatByToken(nil)", err, parley.ENOTFOUND)
	_, err = s.SeatByToken(ctx(t), []byte{})
	wantCode(t, "SeatByToken(empty)", err, parley.ENOTFOUND)
}

func testAppend(t *testing.T, s parley.Store) {
	MustCreateRoom(t, s, "limiter")
	MustCreateRoom(t, s, "other")
	m := msg("limiter", "alice", "v1 report limiter to all n=1\ndone token bucket")
	m.Re = 7
	m.Notes = []string{"! ev#1 verified: commit 3f9a2c1 on feat/rate-limit", "! done without ev"}
	in := *m
	got := MustAppend(t, s, &parley.Append{Message: m})
	if got.Seq != 1 {
		t.Fatalf("first seq = %d, want 1", got.Seq)
	}
	if !reflect.DeepEqual(*m, in) {
		t.Fatalf("Append changed the caller's message: %+v", m)
	}
	want := in
	want.Seq = 1
	if !reflect.DeepEqual(got, &want) {
		t.Fatalf("Append returned %+v, want %+v", got, &want)
	}
	read, err := s.Message(ctx(t), "limiter", 1)
	if err != nil {
		t.Fatalf("Message: %v", err)
	}
	if !reflect.DeepEqual(read, got) {
		t.Fatalf("Message = %+v, want what Append returned, %+v", read, got)
	}

	// Seqs are per room.
	if got := post(t, s, "other", "bob", "v1 note x to all n=0"); got.Seq != 1 {
		t.Fatalf("first seq in other room = %d, want 1", got.Seq)
	}
	plain := &parley.Message{Room: "limiter", Seat: "bob", Time: t0, Format: parley.FormatText, Body: "hello"}
	if got := MustAppend(t, s, &parley.Append{Message: plain, DedupLast: 500, DedupSince: t0.Add(-time.Hour)}); got.Seq != 2 || got.Notes != nil || got.Hash != nil {
		t.Fatalf("plain message: seq %d notes %v hash %x, want 2, nil, nil", got.Seq, got.Notes, got.Hash)
	}
	wantLastSeq(t, s, "limiter", 2)
	wantLastSeq(t, s, "other", 1)
	_, err = s.Message(ctx(t), "limiter", 3)
	wantCode(t, "Message(3)", err, parley.ENOTFOUND)
}

func testAppendErrors(t *testing.T, s parley.Store) {
	_, err := s.Append(ctx(t), &parley.Append{Message: msg("nosuch", "alice", "x")})
	wantCode(t, "Append(no room)", err, parley.ENOTFOUND)
}

func testGaplessConcurrent(t *testing.T, s parley.Store) {
	MustCreateRoom(t, s, "limiter")
	MustCreateRoom(t, s, "other")
	const workers, each = 8, 50
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		seqs = map[string][]int64{}
		errs []error
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				room := "limiter"
				if i%5 == 4 {
					room = "other" // a second room interleaved: its seqs are its own
				}
				body := fmt.Sprintf("v1 note load to all n=1\nworker %d post %d", w, i)
				m, err := s.Append(context.Background(), &parley.Append{Message: msg(room, fmt.Sprintf("w%d", w), body), DedupLast: 500})
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					seqs[room] = append(seqs[room], m.Seq)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d appends failed, first: %v", len(errs), errs[0])
	}
	for room, n := range map[string]int{"limiter": workers * each * 4 / 5, "other": workers * each / 5} {
		checkGapless(t, seqs[room], n)
		wantLastSeq(t, s, room, int64(n))
		msgs, err := s.Messages(ctx(t), room, 0, 0)
		if err != nil {
			t.Fatalf("Messages: %v", err)
		}
		if len(msgs) != n {
			t.Fatalf("%s: %d messages stored, want %d", room, len(msgs), n)
		}
		for i, m := range msgs {
			if m.Seq != int64(i+1) {
				t.Fatalf("%s: message %d has seq %d", room, i, m.Seq)
			}
		}
	}
}

// testGaplessConcurrentRefusals interleaves, under concurrency, appends that the store
// refuses (replays of an Idempotency-Key, repeats of a body) with appends it stores: stores
// that share a transaction between concurrent appends must undo a refused one alone, seq
// included, and answer each with its own result.
func testGaplessConcurrentRefusals(t *testing.T, s parley.Store) {
	MustCreateRoom(t, s, "limiter")
	const workers, groups = 8, 15
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		seqs []int64
		errs []string
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		errs = append(errs, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seat := fmt.Sprintf("w%d", w)
			add := func(body, key string) (parley.Appended, error) {
				m := msg("limiter", seat, body)
				m.IdempotencyKey = key
				return s.Append(context.Background(), &parley.Append{Message: m, DedupLast: 500})
			}
			for g := range groups {
				// A stored post with a key, then a replay of the key with another body.
				key := fmt.Sprintf("k-%d-%d", w, g)
				first, err := add(fmt.Sprintf("v1 note load to all n=1\nworker %d group %d keyed", w, g), key)
				if err != nil || first.Replay {
					fail("%s: keyed post: %+v, %v", seat, first, err)
					return
				}
				again, err := add(fmt.Sprintf("v1 note load to all n=1\nworker %d group %d other", w, g), key)
				if err != nil || !again.Replay || again.Seq != first.Seq {
					fail("%s: replay of #%d: %+v, %v", seat, first.Seq, again, err)
					return
				}
				// A stored post, then a repeat of its body.
				body := fmt.Sprintf("v1 note load to all n=1\nworker %d group %d plain", w, g)
				plain, err := add(body, "")
				if err != nil {
					fail("%s: post: %v", seat, err)
					return
				}
				_, err = add(body, "")
				var e *parley.Error
				if parley.ErrorCode(err) != parley.ECONFLICT || !errors.As(err, &e) || e.Fields["seq"] != plain.Seq {
					fail("%s: repeat of #%d: %v", seat, plain.Seq, err)
					return
				}
				mu.Lock()
				seqs = append(seqs, first.Seq, plain.Seq)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d failures, first: %s", len(errs), errs[0])
	}
	n := workers * groups * 2
	checkGapless(t, seqs, n)
	wantLastSeq(t, s, "limiter", int64(n))
	msgs, err := s.Messages(ctx(t), "limiter", 0, 0)
	if err != nil {
		t.Fatalf("Messages: %v", err)
	}
	if len(msgs) != n {
		t.Fatalf("%d messages stored, want %d", len(msgs), n)
	}
}

// checkGapless fails unless seqs are exactly 1..n in some order.
func checkGapless(t testing.TB, seqs []int64, n int) {
	t.Helper()
	got := slices.Clone(seqs)
	slices.Sort(got)
	if len(got) != n {
		t.Fatalf("%d seqs, want %d", len(got), n)
	}
	for i, seq := range got {
		if seq != int64(i+1) {
			t.Fatalf("seqs are not 1..%d: position %d holds %d (gap or duplicate)", n, i, seq)
		}
	}
}

func testBodyBytesExact(t *testing.T, s parley.Store) {
	MustCreateRoom(t, s, "limiter")
	bodies := []string{
		"v1 report limiter to all n=1\r\ndone crlf line endings\r\n",
		"trailing spaces   \nand tabs\t\t\n\n\n",
		"  leading spaces and no final newline",
		"e\u0301 and \u00e9 are different bytes", // NFD and NFC: no normalisation
		"\ufeffbyte order mark, zero\u200bwidth, joiner \U0001F469\u200d\U0001F4BB",
		"right-to-left \u202eoverride\u202c and line\u2028separator",
		"nul \x00 byte and \x7f delete and \x1b[31mescape",
		"{\"looks\": \"like json\"}\n",
		"\xff\xfe not UTF-8 at all \xc3\x28",
		"'quotes' \"double\" `back` \\ backslash; DROP TABLE messages; --",
		"",
	}
	for i, body := range bodies {
		m := &parley.Message{Room: "limiter", Seat: fmt.Sprintf("s%d", i), Time: t0, Format: parley.FormatText, Body: body, Hash: hash(body),
			Notes: []string{"note with \r\n and \x00 and \u00e9 ", ""}}
		got := MustAppend(t, s, &parley.Append{Message: m})
		if got.Body != body {
			t.Fatalf("Append returned body %q, want %q", got.Body, body)
		}
	}
	msgs, err := s.Messages(ctx(t), "limiter", 0, 0)
	if err != nil {
		t.Fatalf("Messages: %v", err)
	}
	for i, m := range msgs {
		if m.Body != bodies[i] {
			t.Errorf("#%d body = %q, want %q", m.Seq, m.Body, bodies[i])
		}
		if want := []string{"note with \r\n and \x00 and \u00e9 ", ""}; !slices.Equal(m.Notes, want) {
			t.Errorf("#%d notes = %q, want %q", m.Seq, m.Notes, want)
		}
	}
}

func testTimeRoundTrip(t *testing.T, s parley.Store) {
	// A zone other than UTC and a time with microseconds: stores return the same instant, in
	// UTC, so that history renders identically however the time came in.
	zone := time.FixedZone("UTC+5:30", 5*3600+1800)
	at := time.Date(2026, 2, 28, 23, 59, 59, 999999000, zone)
	r := &parley.Room{Name: "limiter", Policy: parley.DefaultPolicy(), CreatedAt: at}
	if err := s.CreateRoom(ctx(t), r); err != nil {
		t.Fatalf("CreateRoom: %v", err)
	}
	room, err := s.Room(ctx(t), "limiter")
	if err != nil {
		t.Fatalf("Room: %v", err)
	}
	checkTime(t, "room created_at", room.CreatedAt, at)

	if err := s.CreateSeat(ctx(t), &parley.Seat{Room: "limiter", Name: "alice", Role: parley.RoleAgent, TokenHash: tokenHash("limiter", "alice"), CreatedAt: at}); err != nil {
		t.Fatalf("CreateSeat: %v", err)
	}
	if err := s.RevokeSeat(ctx(t), "limiter", "alice", at.Add(time.Microsecond)); err != nil {
		t.Fatalf("RevokeSeat: %v", err)
	}
	seat, err := s.Seat(ctx(t), "limiter", "alice")
	if err != nil {
		t.Fatalf("Seat: %v", err)
	}
	checkTime(t, "seat created_at", seat.CreatedAt, at)
	checkTime(t, "seat revoked_at", *seat.RevokedAt, at.Add(time.Microsecond))

	m := msg("limiter", "alice", "v1 note t to all n=0")
	m.Time = at
	got := MustAppend(t, s, &parley.Append{Message: m, Asks: []*parley.Ask{{Line: 2, To: "bob", Text: "x", Due: ptr(at.Add(time.Hour))}}})
	checkTime(t, "Append returned time", got.Time, at)
	read, err := s.Message(ctx(t), "limiter", got.Seq)
	if err != nil {
		t.Fatalf("Message: %v", err)
	}
	checkTime(t, "message time", read.Time, at)
	asks, err := s.Asks(ctx(t), "limiter", "")
	if err != nil || len(asks) != 1 {
		t.Fatalf("Asks = %v, %v", asks, err)
	}
	if asks[0].Due == nil {
		t.Fatal("ask due: nil")
	}
	checkTime(t, "ask due", *asks[0].Due, at.Add(time.Hour))

	// Nanoseconds below the microsecond are dropped, the same way by Append and by reads.
	m = msg("limiter", "alice", "v1 note nanos to all n=0")
	m.Time = at.Add(789 * time.Nanosecond)
	got = MustAppend(t, s, &parley.Append{Message: m})
	read, err = s.Message(ctx(t), "limiter", got.Seq)
	if err != nil {
		t.Fatalf("Message: %v", err)
	}
	checkTime(t, "nanosecond time", got.Time, at)
	checkTime(t, "nanosecond time read back", read.Time, at)

	if err := s.CreateRun(ctx(t), &parley.Run{Room: "limiter", ID: "r1", Seat: "alice", Time: at}); err != nil {
		t.Fatalf("CreateRun: %v", err)
	}
	run, err := s.Run(ctx(t), "limiter", "r1")
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkTime(t, "run time", run.Time, at)
}

func checkTime(t testing.TB, what string, got, want time.Time) {
	t.Helper()
	if !got.Equal(want) || got.Location() != time.UTC {
		t.Fatalf("%s = %v (%v), want %v in UTC", what, got, got.Location(), want.UTC())
	}
	if got.Format(time.RFC3339Nano) != want.UTC().Format(time.RFC3339Nano) {
		t.Fatalf("%s renders %s, want %s", what, got.Format(time.RFC3339Nano), want.UTC().Format(time.RFC3339Nano))
	}
}

func testIdempotency(t *testing.T, s parley.Store) {
	MustCreateRoom(t, s, "limiter")
	m := msg("limiter", "alice", "v1 report limiter to all n=1\ndone first")
	m.IdempotencyKey = "k-1"
	orig := MustAppend(t, s, &parley.Append{Message: m})

	// A retry, even with another body and with asks, stores nothing and returns the original.
	retry := msg("limiter", "alice", "v1 report limiter to all n=1\ndone second")
	retry.IdempotencyKey = "k-1"
	got, err := s.Append(ctx(t), &parley.Append{Message: retry, Asks: []*parley.Ask{{Line: 2, To: "bob", Text: "x"}}})
	if err != nil || !got.Replay {
		t.Fatalf("replay: %+v, %v; want a replay and no error", got, err)
	}
	if !reflect.DeepEqual(got.Message, orig) {
		t.Fatalf("replay returned %+v, want the original %+v", got.Message, orig)
	}
	wantLastSeq(t, s, "limiter", 1)
	if asks, err := s.Asks(ctx(t), "limiter", ""); err != nil || len(asks) != 0 {
		t.Fatalf("replay stored asks: %v, %v", asks, err)
	}

	// The usual retry repeats the body too: it is a replay, not a refused repeat.
	same := *m
	got, err = s.Append(ctx(t), &parley.Append{Message: &same, DedupSince: t0.Add(-time.Hour), DedupLast: 500})
	if err != nil || !got.Replay || !reflect.DeepEqual(got.Message, orig) {
		t.Fatalf("retry with the same body: %+v, %v; want a replay of the original", got, err)
	}

	// Keys are per seat: another seat's identical key is a new post.
	other := msg("limiter", "bob", "v1 report limiter to all n=1\ndone first")
	other.IdempotencyKey = "k-1"
	if got := MustAppend(t, s, &parley.Append{Message: other}); got.Seq != 2 {
		t.Fatalf("other seat's key: seq %d, want 2", got.Seq)
	}
	byKey, err := s.ByIdempotencyKey(ctx(t), "limiter", "alice", "k-1")
	if err != nil {
		t.Fatalf("ByIdempotencyKey: %v", err)
	}
	if !reflect.DeepEqual(byKey, orig) {
		t.Fatalf("ByIdempotencyKey = %+v, want %+v", byKey, orig)
	}
	_, err = s.ByIdempotencyKey(ctx(t), "limiter", "alice", "k-2")
	wantCode(t, "ByIdempotencyKey(unknown)", err, parley.ENOTFOUND)
	// Messages without a key never match the empty key.
	post(t, s, "limiter", "carol", "v1 note a to all n=0")
	_, err = s.ByIdempotencyKey(ctx(t), "limiter", "carol", "")
	wantCode(t, "ByIdempotencyKey(empty)", err, parley.ENOTFOUND)
}

func wantDuplicate(t testing.TB, err error, seq int64) {
	t.Helper()
	wantCode(t, "duplicate", err, parley.ECONFLICT)
	var e *parley.Error
	if !errors.As(err, &e) || e.Fields["seq"] != seq {
		t.Fatalf("duplicate: %#v, want Fields[seq] = %d (int64)", err, seq)
	}
	// Storage says what is wrong; how to fix it is the service's to say (room/).
	if e.Hint != "" {
		t.Fatalf("duplicate: a store's error carries a hint: %q", e.Hint)
	}
}

func testDedupWindow(t *testing.T, s parley.Store) {
	MustCreateRoom(t, s, "limiter")
	body := "v1 report limiter to all n=1\ndone token bucket"
	first := post(t, s, "limiter", "alice", body) // at t0

	again := msg("limiter", "alice", body)
	again.Time = t0.Add(time.Hour)
	_, err := s.Append(ctx(t), &parley.Append{Message: again, DedupSince: t0.Add(-time.Second)})
	wantDuplicate(t, err, first.Seq)
	wantLastSeq(t, s, "limiter", 1) // refused: nothing stored, no seq used

	if seq, err := s.Duplicate(ctx(t), "limiter", "alice", hash(body), t0.Add(-time.Second), 0); err != nil || seq != 1 {
		t.Fatalf("Duplicate(window) = %d, %v, want 1", seq, err)
	}
	// The window is strict: a message at exactly `since` is outside it.
	if seq, err := s.Duplicate(ctx(t), "limiter", "alice", hash(body), t0, 0); err != nil || seq != 0 {
		t.Fatalf("Duplicate(window starting at the message) = %d, %v, want 0", seq, err)
	}
	// Another seat may say the same thing.
	if got := MustAppend(t, s, &parley.Append{Message: msg("limiter", "bob", body), DedupSince: t0.Add(-time.Second)}); got.Seq != 2 {
		t.Fatalf("other seat: seq %d, want 2", got.Seq)
	}
	// Outside the window, and without a last-N check, the repeat is accepted.
	got := MustAppend(t, s, &parley.Append{Message: again, DedupSince: t0.Add(time.Minute)})
	if got.Seq != 3 {
		t.Fatalf("repeat outside window: seq %d, want 3", got.Seq)
	}
	// Now the latest copy is the one a repeat points at.
	_, err = s.Append(ctx(t), &parley.Append{Message: again, DedupSince: t0.Add(-time.Second)})
	wantDuplicate(t, err, 3)
	// No dedup asked for: accepted.
	if got := MustAppend(t, s, &parley.Append{Message: again}); got.Seq != 4 {
		t.Fatalf("no dedup: seq %d, want 4", got.Seq)
	}
}

func testDedupLastN(t *testing.T, s parley.Store) {
	MustCreateRoom(t, s, "limiter")
	a, b, c := "v1 note a to all n=0", "v1 note b to all n=0", "v1 note c to all n=0"
	post(t, s, "limiter", "alice", a) // 1
	post(t, s, "limiter", "alice", b) // 2
	post(t, s, "limiter", "bob", a)   // 3: bob's posts do not count for alice's last N
	post(t, s, "limiter", "alice", c) // 4

	// a is alice's third-last message.
	for n, want := range map[int]int64{1: 0, 2: 0, 3: 1, 500: 1} {
		if seq, err := s.Duplicate(ctx(t), "limiter", "alice", hash(a), time.Time{}, n); err != nil || seq != want {
			t.Fatalf("Duplicate(last %d) = %d, %v, want %d", n, seq, err, want)
		}
	}
	_, err := s.Append(ctx(t), &parley.Append{Message: msg("limiter", "alice", a), DedupLast: 3})
	wantDuplicate(t, err, 1)
	wantLastSeq(t, s, "limiter", 4)
	got := MustAppend(t, s, &parley.Append{Message: msg("limiter", "alice", a), DedupLast: 2})
	if got.Seq != 5 {
		t.Fatalf("outside last 2: seq %d, want 5", got.Seq)
	}
	// Window and last-N together: either one catches the repeat, with the latest copy's seq.
	old := msg("limiter", "alice", c)
	_, err = s.Append(ctx(t), &parley.Append{Message: old, DedupSince: t0.Add(time.Hour), DedupLast: 2})
	wantDuplicate(t, err, 4)
	_, err = s.Append(ctx(t), &parley.Append{Message: old, DedupSince: t0.Add(-time.Hour), DedupLast: 1})
	wantDuplicate(t, err, 4)
	if seq, err := s.Duplicate(ctx(t), "limiter", "alice", hash("never said"), t0.Add(-time.Hour), 500); err != nil || seq != 0 {
		t.Fatalf("Duplicate(new body) = %d, %v, want 0", seq, err)
	}
}

func testAsks(t *testing.T, s parley.Store) {
	MustCreateRoom(t, s, "limiter")
	asks := []*parley.Ask{
		{Line: 2, From: "alice", To: "bob", Topic: "limiter", Text: "which bucket size?", Due: ptr(t0.Add(time.Hour)), Default: "64", Decider: "yu"},
		{Line: 3, From: "alice", To: "carol", Topic: "limiter", Text: "review?", Due: ptr(t0.Add(2 * time.Hour))},
		{Line: 4, From: "alice", To: "all", Topic: "limiter", Text: "objections?"},
	}
	m1 := MustAppend(t, s, &parley.Append{Message: msg("limiter", "alice", "v1 request limiter to bob,carol,all n=3\nask a\nask b\nask c"), Asks: asks})
	for _, a := range asks {
		if a.Seq != m1.Seq || a.State != parley.AskOpen || a.Room != "limiter" {
			t.Fatalf("Append did not fill in the ask: %+v", a)
		}
	}
	open, err := s.Asks(ctx(t), "limiter", parley.AskOpen)
	if err != nil {
		t.Fatalf("Asks: %v", err)
	}
	if !reflect.DeepEqual(open, asks) {
		t.Fatalf("open asks = %s, want %s", dumpAsks(open), dumpAsks(asks))
	}
	next, err := s.NextDue(ctx(t))
	if err != nil || !next.Equal(t0.Add(time.Hour)) {
		t.Fatalf("NextDue = %v, %v, want %v", next, err, t0.Add(time.Hour))
	}
	due, err := s.DueAsks(ctx(t), t0.Add(time.Hour-time.Microsecond))
	if err != nil || len(due) != 0 {
		t.Fatalf("DueAsks(before) = %s, %v, want none", dumpAsks(due), err)
	}
	due, err = s.DueAsks(ctx(t), t0.Add(time.Hour)) // due at exactly t counts
	if err != nil || len(due) != 1 || due[0].To != "bob" {
		t.Fatalf("DueAsks(at bob's due) = %s, %v, want bob's ask", dumpAsks(due), err)
	}

	// carol answers: her ask and the one to all close; bob's stays open.
	reply := msg("limiter", "carol", "v1 answer limiter to alice re 1 n=1\nrec ship it")
	reply.Re = m1.Seq
	m2 := MustAppend(t, s, &parley.Append{Message: reply, Answers: []int64{m1.Seq}})
	all, err := s.Asks(ctx(t), "limiter", "")
	if err != nil {
		t.Fatalf("Asks: %v", err)
	}
	wantStates(t, all, []string{parley.AskOpen, parley.AskAnswered, parley.AskAnswered}, []int64{0, m2.Seq, m2.Seq})

	// The scheduler lapses bob's ask with a system message; a second instance racing it loses.
	lapse := &parley.Message{Room: "limiter", Seat: parley.SystemSeat, Time: t0.Add(time.Hour), Format: parley.FormatConvention, Body: "v1 note limiter to alice,bob re 1 n=1\ndefault 64 applied"}
	m3 := MustAppend(t, s, &parley.Append{Message: lapse, Lapses: all[0]})
	_, err = s.Append(ctx(t), &parley.Append{Message: lapse, Lapses: all[0]})
	wantCode(t, "second lapse", err, parley.ECONFLICT)
	wantLastSeq(t, s, "limiter", m3.Seq) // the losing lapse stored nothing
	all, err = s.Asks(ctx(t), "limiter", "")
	if err != nil {
		t.Fatalf("Asks: %v", err)
	}
	wantStates(t, all, []string{parley.AskLapsed, parley.AskAnswered, parley.AskAnswered}, []int64{m3.Seq, m2.Seq, m2.Seq})

	// A late answer changes nothing; an answer lapses nothing already closed.
	late := msg("limiter", "bob", "v1 answer limiter to alice re 1 n=1\nrec 32")
	MustAppend(t, s, &parley.Append{Message: late, Answers: []int64{m1.Seq, 999}})
	lapsed, err := s.Asks(ctx(t), "limiter", parley.AskLapsed)
	if err != nil || len(lapsed) != 1 || lapsed[0].ClosedBy != m3.Seq {
		t.Fatalf("lapsed asks after a late answer = %s, %v", dumpAsks(lapsed), err)
	}
	answered, err := s.Asks(ctx(t), "limiter", parley.AskAnswered)
	if err != nil || len(answered) != 2 {
		t.Fatalf("answered asks = %s, %v", dumpAsks(answered), err)
	}
	_, err = s.Append(ctx(t), &parley.Append{Message: lapse, Lapses: all[1]})
	wantCode(t, "lapse an answered ask", err, parley.ECONFLICT)

	next, err = s.NextDue(ctx(t))
	if err != nil || !next.IsZero() {
		t.Fatalf("NextDue with no open ask = %v, %v, want zero", next, err)
	}
	due, err = s.DueAsks(ctx(t), t0.Add(24*time.Hour))
	if err != nil || len(due) != 0 {
		t.Fatalf("DueAsks with no open ask = %s, %v", dumpAsks(due), err)
	}
}

func wantStates(t testing.TB, asks []*parley.Ask, states []string, closedBy []int64) {
	t.Helper()
	if len(asks) != len(states) {
		t.Fatalf("asks = %s, want %d", dumpAsks(asks), len(states))
	}
	for i, a := range asks {
		if a.State != states[i] || a.ClosedBy != closedBy[i] {
			t.Fatalf("ask line %d: state %s closed by %d, want %s by %d", a.Line, a.State, a.ClosedBy, states[i], closedBy[i])
		}
	}
}

func dumpAsks(asks []*parley.Ask) string {
	s := "["
	for _, a := range asks {
		s += fmt.Sprintf("%+v ", *a)
	}
	return s + "]"
}

func testAsksAddressee(t *testing.T, s parley.Store) {
	MustCreateRoom(t, s, "limiter")
	m1 := MustAppend(t, s, &parley.Append{
		Message: msg("limiter", "alice", "v1 request limiter to bob n=1\nask size?"),
		Asks:    []*parley.Ask{{Line: 2, To: "bob", Text: "size?"}},
	})
	// dave is not addressed: his `re 1` answers nothing.
	MustAppend(t, s, &parley.Append{Message: msg("limiter", "dave", "v1 answer limiter to alice re 1 n=1\nrec 3"), Answers: []int64{m1.Seq}})
	open, err := s.Asks(ctx(t), "limiter", parley.AskOpen)
	if err != nil || len(open) != 1 {
		t.Fatalf("open asks after dave = %s, %v, want bob's", dumpAsks(open), err)
	}
	if open[0].From != "alice" {
		t.Fatalf("ask From = %q, want the sender alice", open[0].From)
	}
	if open[0].Due != nil {
		t.Fatalf("ask without time: Due = %v, want nil", *open[0].Due)
	}
	m3 := MustAppend(t, s, &parley.Append{Message: msg("limiter", "bob", "v1 answer limiter to alice re 1 n=1\nrec 4"), Answers: []int64{m1.Seq}})
	all, err := s.Asks(ctx(t), "limiter", "")
	if err != nil {
		t.Fatalf("Asks: %v", err)
	}
	wantStates(t, all, []string{parley.AskAnswered}, []int64{m3.Seq})
	// An ask without a time is never due.
	if next, err := s.NextDue(ctx(t)); err != nil || !next.IsZero() {
		t.Fatalf("NextDue = %v, %v, want zero", next, err)
	}
}

func testAsksOrder(t *testing.T, s parley.Store) {
	MustCreateRoom(t, s, "limiter")
	MustAppend(t, s, &parley.Append{Message: msg("limiter", "alice", "v1 request x to bob n=4\nfact\nask a\nfact\nask b"),
		Asks: []*parley.Ask{{Line: 5, To: "bob", Text: "b"}, {Line: 3, To: "bob", Text: "a"}}})
	MustAppend(t, s, &parley.Append{Message: msg("limiter", "carol", "v1 request x to bob n=1\nask c"),
		Asks: []*parley.Ask{{Line: 2, To: "bob", Text: "c"}}})
	asks, err := s.Asks(ctx(t), "limiter", "")
	if err != nil {
		t.Fatalf("Asks: %v", err)
	}
	var got []string
	for _, a := range asks {
		got = append(got, fmt.Sprintf("%d:%d:%s", a.Seq, a.Line, a.Text))
	}
	if want := []string{"1:3:a", "1:5:b", "2:2:c"}; !slices.Equal(got, want) {
		t.Fatalf("Asks = %v, want %v (by seq, then line)", got, want)
	}
}

func testDueAsksAcrossRooms(t *testing.T, s parley.Store) {
	MustCreateRoom(t, s, "a")
	MustCreateRoom(t, s, "b")
	MustAppend(t, s, &parley.Append{Message: msg("a", "alice", "v1 request x to bob n=1\nask late"),
		Asks: []*parley.Ask{{Line: 2, To: "bob", Text: "late", Due: ptr(t0.Add(3 * time.Hour))}}})
	MustAppend(t, s, &parley.Append{Message: msg("b", "alice", "v1 request x to bob n=2\nask early\nask none"),
		Asks: []*parley.Ask{{Line: 2, To: "bob", Text: "early", Due: ptr(t0.Add(time.Hour))}, {Line: 3, To: "bob", Text: "none"}}})
	next, err := s.NextDue(ctx(t))
	if err != nil || !next.Equal(t0.Add(time.Hour)) {
		t.Fatalf("NextDue = %v, %v, want %v", next, err, t0.Add(time.Hour))
	}
	due, err := s.DueAsks(ctx(t), t0.Add(5*time.Hour))
	if err != nil {
		t.Fatalf("DueAsks: %v", err)
	}
	var got []string
	for _, a := range due {
		got = append(got, a.Room+":"+a.Text)
	}
	if want := []string{"b:early", "a:late"}; !slices.Equal(got, want) {
		t.Fatalf("DueAsks = %v, want %v (earliest first, none without a time)", got, want)
	}
}

// testDueAtZeroTime: an ask due at Go's zero time (0001-01-01T00:00Z, as a post may write
// it) is a time like any other, long past: it is kept, and due.
func testDueAtZeroTime(t *testing.T, s parley.Store) {
	MustCreateRoom(t, s, "a")
	MustAppend(t, s, &parley.Append{Message: msg("a", "alice", "v1 request x to bob n=1\nask 00010101T0000Z"),
		Asks: []*parley.Ask{{Line: 2, To: "bob", Text: "00010101T0000Z", Due: ptr(time.Time{})}}})
	open, err := s.Asks(ctx(t), "a", parley.AskOpen)
	if err != nil || len(open) != 1 || open[0].Due == nil || !open[0].Due.IsZero() {
		t.Fatalf("Asks = %s, %v, want one due at the zero time", dumpAsks(open), err)
	}
	due, err := s.DueAsks(ctx(t), t0)
	if err != nil || len(due) != 1 {
		t.Fatalf("DueAsks = %s, %v, want the ask due at the zero time", dumpAsks(due), err)
	}
}

func testRuns(t *testing.T, s parley.Store) {
	MustCreateRoom(t, s, "limiter")
	r := &parley.Run{Room: "limiter", ID: "ci-4711", Commit: "3f9a2c1", Passed: 112, Failed: 3, Seat: "runner", Time: t0}
	if err := s.CreateRun(ctx(t), r); err != nil {
		t.Fatalf("CreateRun: %v", err)
	}
	got, err := s.Run(ctx(t), "limiter", "ci-4711")
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !reflect.DeepEqual(got, r) {
		t.Fatalf("Run = %+v, want %+v", got, r)
	}
	wantCode(t, "CreateRun(taken id)", s.CreateRun(ctx(t), r), parley.ECONFLICT)
	_, err = s.Run(ctx(t), "limiter", "ci-4712")
	wantCode(t, "Run(unknown)", err, parley.ENOTFOUND)
	wantCode(t, "CreateRun(no room)", s.CreateRun(ctx(t), &parley.Run{Room: "nosuch", ID: "x", Seat: "runner", Time: t0}), parley.ENOTFOUND)
}

func testStats(t *testing.T, s parley.Store) {
	MustCreateRoom(t, s, "limiter")
	MustCreateRoom(t, s, "other")
	for _, st := range []struct {
		seat, key string
		delta     int64
	}{
		{"alice", "dedup_tokens", 40}, {"alice", "dedup_tokens", 2}, {"alice", "read_tokens", 1000},
		{"bob", "read_tokens", 7}, {"bob", "read_tokens", -2},
	} {
		if err := s.AddStat(ctx(t), "limiter", st.seat, st.key, st.delta); err != nil {
			t.Fatalf("AddStat: %v", err)
		}
	}
	if err := s.AddStat(ctx(t), "other", "alice", "read_tokens", 99); err != nil {
		t.Fatalf("AddStat: %v", err)
	}
	got, err := s.Stats(ctx(t), "limiter")
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	want := map[string]map[string]int64{
		"alice": {"dedup_tokens": 42, "read_tokens": 1000},
		"bob":   {"read_tokens": 5},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Stats = %v, want %v", got, want)
	}
	MustCreateRoom(t, s, "empty")
	if got, err := s.Stats(ctx(t), "empty"); err != nil || len(got) != 0 {
		t.Fatalf("Stats(empty) = %v, %v, want none", got, err)
	}
	wantCode(t, "AddStat(no room)", s.AddStat(ctx(t), "nosuch", "alice", "x", 1), parley.ENOTFOUND)

	// Concurrent adds are not lost.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 10 {
				if err := s.AddStat(context.Background(), "other", "bob", "n", 1); err != nil {
					t.Errorf("AddStat: %v", err)
				}
			}
		})
	}
	wg.Wait()
	if got, err := s.Stats(ctx(t), "other"); err != nil || got["bob"]["n"] != 80 {
		t.Fatalf("Stats after concurrent adds = %v, %v, want bob n=80", got, err)
	}
}

// waitFor receives from ch until it sees want, failing on a value above want, a closed
// channel, or a timeout.
func waitFor(t testing.TB, ch <-chan int64, want int64) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case got, ok := <-ch:
			if !ok {
				t.Fatalf("watch channel closed, waiting for %d", want)
			}
			if got == want {
				return
			}
			if got > want {
				t.Fatalf("watch sent %d, waiting for %d", got, want)
			}
		case <-timeout:
			t.Fatalf("watch: no %d within 10s", want)
		}
	}
}

// wantQuiet fails if ch delivers a value within d.
func wantQuiet(t testing.TB, ch <-chan int64, d time.Duration) {
	t.Helper()
	select {
	case got := <-ch:
		t.Fatalf("watch sent %d, want nothing", got)
	case <-time.After(d):
	}
}

func testWatch(t *testing.T, s parley.Store) {
	MustCreateRoom(t, s, "limiter")
	MustCreateRoom(t, s, "other")
	wctx, cancel := context.WithCancel(ctx(t))
	ch := s.Watch(wctx, "limiter")
	other := s.Watch(ctx(t), "other")

	post(t, s, "limiter", "alice", "v1 note a to all n=0")
	waitFor(t, ch, 1)

	// A slow reader does not block appends and then sees the latest seq.
	for i := range 5 {
		post(t, s, "limiter", "alice", fmt.Sprintf("v1 note b%d to all n=0", i))
	}
	waitFor(t, ch, 6)
	wantQuiet(t, other, 200*time.Millisecond) // other rooms' watchers are not woken

	post(t, s, "other", "bob", "v1 note c to all n=0")
	waitFor(t, other, 1)

	cancel()
	select {
	case _, ok := <-ch:
		for ok {
			_, ok = <-ch
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("watch channel not closed after its context ended")
	}
	post(t, s, "limiter", "alice", "v1 note after cancel to all n=0") // must not panic
}

func testPaging(t *testing.T, s parley.Store) {
	MustCreateRoom(t, s, "limiter")
	MustCreateRoom(t, s, "other")
	for i := range 10 {
		post(t, s, "limiter", "alice", fmt.Sprintf("v1 note p%d to all n=0", i))
		post(t, s, "other", "bob", fmt.Sprintf("v1 note q%d to all n=0", i))
	}
	for _, tt := range []struct {
		after int64
		limit int
		want  []int64
	}{
		{0, 0, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
		{0, -1, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
		{3, 4, []int64{4, 5, 6, 7}},
		{8, 100, []int64{9, 10}},
		{10, 0, nil},
		{42, 5, nil},
		{0, 1, []int64{1}},
	} {
		msgs, err := s.Messages(ctx(t), "limiter", tt.after, tt.limit)
		if err != nil {
			t.Fatalf("Messages(after %d, limit %d): %v", tt.after, tt.limit, err)
		}
		var got []int64
		for _, m := range msgs {
			if m.Room != "limiter" {
				t.Fatalf("Messages returned a message of room %q", m.Room)
			}
			got = append(got, m.Seq)
		}
		if !slices.Equal(got, tt.want) {
			t.Fatalf("Messages(after %d, limit %d) = %v, want %v", tt.after, tt.limit, got, tt.want)
		}
	}
	if msgs, err := s.Messages(ctx(t), "nosuch", 0, 0); err != nil || len(msgs) != 0 {
		t.Fatalf("Messages(nosuch) = %v, %v, want none", msgs, err)
	}
}

// testCloseEndsWatch checks that Close closes the channels of watchers still waiting, and that
// a second Close (the one t.Cleanup makes) is harmless.
func testCloseEndsWatch(t *testing.T, s parley.Store) {
	MustCreateRoom(t, s, "limiter")
	ch := s.Watch(context.Background(), "limiter")
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case _, ok := <-ch:
		if ok {
			t.Fatal("watch sent a value after Close")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watch channel still open after Close")
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// testEmptyLists checks that every list method returns nil, not an empty slice, when there is
// nothing to list: the stores agree, so the edges encode an empty list alike.
func testEmptyLists(t *testing.T, s parley.Store) {
	check := func(what string, n int, isNil bool, err error) {
		t.Helper()
		if err != nil || n != 0 || !isNil {
			t.Fatalf("%s on an empty store: %d items (nil %v), %v; want nil", what, n, isNil, err)
		}
	}
	rooms, err := s.Rooms(ctx(t))
	check("Rooms", len(rooms), rooms == nil, err)
	MustCreateRoom(t, s, "limiter")
	seats, err := s.Seats(ctx(t), "limiter")
	check("Seats", len(seats), seats == nil, err)
	msgs, err := s.Messages(ctx(t), "limiter", 0, 0)
	check("Messages", len(msgs), msgs == nil, err)
	asks, err := s.Asks(ctx(t), "limiter", "")
	check("Asks", len(asks), asks == nil, err)
	due, err := s.DueAsks(ctx(t), t0.Add(time.Hour))
	check("DueAsks", len(due), due == nil, err)
	stats, err := s.Stats(ctx(t), "limiter")
	if err != nil || stats == nil || len(stats) != 0 {
		t.Fatalf("Stats on an empty room = %v (nil %v), %v; want an empty map", stats, stats == nil, err)
	}
}

func ptr[T any](v T) *T { return &v }
