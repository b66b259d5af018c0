// Package servicetest is the behaviour suite of parley.RoomService: what every implementation
// must do, whoever calls it. It runs against room.Service in process (package room's tests)
// and against client.Client talking to a real server over HTTP, on SQLite and PostgreSQL
// (package client's tests), the way storetest runs against both stores.
//
// Each case gets a fresh service from the factory and talks to it only through the
// interface: rooms, seats and callers are made with CreateRoom, AddSeat and Authenticate.
// The cases use no clock: times come from the service's own, and asks are due in 2099.
package servicetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley"
)

// Env is one service under test and its admin.
type Env struct {
	Svc        parley.RoomService
	Admin      *parley.Caller
	AdminToken string
}

// Factory returns a fresh, empty service for one test case, closed with t.Cleanup.
type Factory func(t *testing.T) Env

// Cases lists the suite's cases by name.
var Cases = []struct {
	Name string
	Fn   func(t *testing.T, e Env)
}{
	{"CreateRoom", testCreateRoom},
	{"RoomsBySeat", testRoomsBySeat},
	{"PolicyPatch", testPolicyPatch},
	{"AddSeatAndSeats", testAddSeatAndSeats},
	{"Authenticate", testAuthenticate},
	{"Revoke", testRevoke},
	{"Rotate", testRotate},
	{"PostAndHistory", testPostAndHistory},
	{"PostRefusals", testPostRefusals},
	{"AdminHasNoSeat", testAdminHasNoSeat},
	{"Dedup", testDedup},
	{"Idempotency", testIdempotency},
	{"RateLimit", testRateLimit},
	{"Diagnostics", testDiagnostics},
	{"MoreDiagnostics", testMoreDiagnostics},
	{"HistorySuffix", testHistorySuffix},
	{"Messages", testMessages},
	{"HistoryLimitAndEmpty", testHistoryLimitAndEmpty},
	{"HistoryPage", testHistoryPage},
	{"HistoryAccess", testHistoryAccess},
	{"Inbox", testInbox},
	{"AskToSeveralSeats", testAskToSeveralSeats},
	{"State", testState},
	{"Runs", testRuns},
	{"Stats", testStats},
	{"Lint", testLint},
	{"Watch", testWatch},
	{"Hold", testHold},
	{"AACPAndLenient", testAACPAndLenient},
	{"PostDraft", testPostDraft},
	{"PostDraftRateLimit", testPostDraftRateLimit},
	{"Search", testSearch},
}

// Run runs every case as a subtest, each on a fresh service from newEnv.
func Run(t *testing.T, newEnv Factory) {
	for _, c := range Cases {
		t.Run(c.Name, func(t *testing.T) {
			c.Fn(t, newEnv(t))
		})
	}
}

//go:embed testdata/p1.txt
var p1 string

//go:embed testdata/p3.txt
var p3 string

// p1Due and p3Due move the study's ask times to 2099, so that the asks are still open
// whatever the service's clock says (a server running its scheduler would otherwise post
// their defaults at once).
var (
	p1Due = strings.ReplaceAll(p1, "20260917T1800Z", "20990917T1800Z")
	p3Due = strings.ReplaceAll(p3, "20260918T0900Z", "20990918T0900Z")
)

// room creates a room with seats given as name or name:role and returns their callers and
// tokens by name.
func room(t *testing.T, e Env, name string, p *parley.Policy, seats ...string) (map[string]*parley.Caller, map[string]string) {
	t.Helper()
	ctx := t.Context()
	if _, err := e.Svc.CreateRoom(ctx, e.Admin, name, p); err != nil {
		t.Fatalf("create room %s: %v", name, err)
	}
	callers, tokens := map[string]*parley.Caller{}, map[string]string{}
	for _, s := range seats {
		seat, role, _ := strings.Cut(s, ":")
		if role == "" {
			role = "agent"
		}
		_, tok, err := e.Svc.AddSeat(ctx, e.Admin, name, seat, parley.Role(role))
		if err != nil {
			t.Fatalf("add seat %s/%s: %v", name, seat, err)
		}
		c, err := e.Svc.Authenticate(ctx, tok)
		if err != nil {
			t.Fatalf("authenticate %s/%s: %v", name, seat, err)
		}
		callers[seat], tokens[seat] = c, tok
	}
	return callers, tokens
}

// code returns err's code, failing the test when err is not a *parley.Error.
func code(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	var pe *parley.Error
	if !errors.As(err, &pe) {
		t.Fatalf("not a *parley.Error: %v", err)
	}
	return pe.Code
}

func field(err error, key string) any {
	var pe *parley.Error
	if errors.As(err, &pe) {
		return pe.Fields[key]
	}
	return nil
}

func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func post(t *testing.T, e Env, c *parley.Caller, room, body string) *parley.PostResult {
	t.Helper()
	res, err := e.Svc.Post(t.Context(), c, room, []byte(body), "")
	if err != nil {
		t.Fatalf("post: %v\n%s", err, body)
	}
	return res
}

func history(t *testing.T, e Env, c *parley.Caller, room string, after int64) string {
	t.Helper()
	b, _, err := e.Svc.History(t.Context(), c, room, after, 0)
	if err != nil {
		t.Fatalf("history after %d: %v", after, err)
	}
	return string(b)
}

func note(i int) string { return fmt.Sprintf("v1 note x to all n=1\nfact number %d\n", i) }

func testCreateRoom(t *testing.T, e Env) {
	ctx := t.Context()
	r, err := e.Svc.CreateRoom(ctx, e.Admin, "team", &parley.Policy{Format: parley.PolicyLenient, SeatBurst: 7})
	if err != nil || r.Name != "team" || r.Policy.Format != parley.PolicyLenient || r.Policy.SeatBurst != 7 || r.Policy.RoomBurst == 0 {
		t.Fatalf("create: %+v, %v (want lenient, burst 7, the rest defaults)", r, err)
	}
	if _, err := e.Svc.CreateRoom(ctx, e.Admin, "team", nil); code(t, err) != parley.ECONFLICT {
		t.Errorf("second room team: %v, want ECONFLICT", err)
	}
	for _, name := range []string{"Bad Name", "", "-x", strings.Repeat("a", 200)} {
		if _, err := e.Svc.CreateRoom(ctx, e.Admin, name, nil); code(t, err) != parley.EINVALID {
			t.Errorf("room name %q: %v, want EINVALID", name, err)
		}
	}
	if _, err := e.Svc.CreateRoom(ctx, e.Admin, "neg", &parley.Policy{SeatBurst: -1}); code(t, err) != parley.EINVALID {
		t.Errorf("negative burst: %v, want EINVALID", err)
	}
	got, err := e.Svc.Room(ctx, e.Admin, "team")
	if err != nil || got.Name != "team" || got.Policy != r.Policy || got.CreatedAt.IsZero() {
		t.Errorf("Room: %+v, %v; want %+v", got, err, r)
	}
	if _, err := e.Svc.Room(ctx, e.Admin, "nowhere"); code(t, err) != parley.ENOTFOUND {
		t.Errorf("unknown room: %v, want ENOTFOUND", err)
	}
}

func testRoomsBySeat(t *testing.T, e Env) {
	ctx := t.Context()
	a, _ := room(t, e, "r", nil, "a")
	s, _ := room(t, e, "s", nil, "c")
	rooms, err := e.Svc.Rooms(ctx, e.Admin)
	if err != nil || len(rooms) != 2 {
		t.Errorf("admin's rooms: %v, %v; want r and s", rooms, err)
	}
	if rooms, err := e.Svc.Rooms(ctx, s["c"]); err != nil || len(rooms) != 1 || rooms[0].Name != "s" {
		t.Errorf("c's rooms: %v, %v; want s only", rooms, err)
	}
	if _, err := e.Svc.Room(ctx, a["a"], "s"); code(t, err) != parley.EFORBIDDEN {
		t.Errorf("another room: %v, want EFORBIDDEN", err)
	}
	if _, err := e.Svc.CreateRoom(ctx, a["a"], "mine", nil); code(t, err) != parley.EFORBIDDEN {
		t.Errorf("a seat creates a room: %v, want EFORBIDDEN", err)
	}
}

func testPolicyPatch(t *testing.T, e Env) {
	ctx := t.Context()
	seats, _ := room(t, e, "r", nil, "a")
	r, err := e.Svc.UpdatePolicy(ctx, e.Admin, "r", []byte(`{"format":"lenient","seat_burst":3}`))
	if err != nil || r.Policy.Format != parley.PolicyLenient || r.Policy.SeatBurst != 3 || r.Policy.RoomBurst != 100 {
		t.Fatalf("patch: %+v, %v", r, err)
	}
	for _, patch := range []string{`{"format":"loose"}`, `{"nope":1}`, `[`, `{"seat_burst":-1}`} {
		if _, err := e.Svc.UpdatePolicy(ctx, e.Admin, "r", []byte(patch)); code(t, err) != parley.EINVALID {
			t.Errorf("patch %s: %v, want EINVALID", patch, err)
		}
	}
	if _, err := e.Svc.UpdatePolicy(ctx, seats["a"], "r", []byte(`{}`)); code(t, err) != parley.EFORBIDDEN {
		t.Errorf("agent patches policy: %v, want EFORBIDDEN", err)
	}
	if _, err := e.Svc.UpdatePolicy(ctx, e.Admin, "nowhere", []byte(`{}`)); code(t, err) != parley.ENOTFOUND {
		t.Errorf("patch of no room: %v, want ENOTFOUND", err)
	}
	if got := must(e.Svc.Room(ctx, e.Admin, "r"))(t); got.Policy.SeatBurst != 3 {
		t.Errorf("the patch did not last: %+v", got.Policy)
	}
}

func testAddSeatAndSeats(t *testing.T, e Env) {
	ctx := t.Context()
	seats, _ := room(t, e, "r", nil, "a", "boss:admin", "ci:runner", "yu:human")
	seat, tok, err := e.Svc.AddSeat(ctx, e.Admin, "r", "b", parley.RoleAgent)
	if err != nil || seat.Room != "r" || seat.Name != "b" || seat.Role != parley.RoleAgent || !strings.HasPrefix(tok, "pk_") {
		t.Errorf("add b: %+v %q %v", seat, tok, err)
	}
	if _, _, err := e.Svc.AddSeat(ctx, e.Admin, "r", "b", parley.RoleAgent); code(t, err) != parley.ECONFLICT {
		t.Errorf("seat b again: %v, want ECONFLICT", err)
	}
	for _, name := range []string{"all", "room", "Bad Name", "-x", ""} {
		if _, _, err := e.Svc.AddSeat(ctx, e.Admin, "r", name, parley.RoleAgent); code(t, err) != parley.EINVALID {
			t.Errorf("seat name %q: %v, want EINVALID", name, err)
		}
	}
	if _, _, err := e.Svc.AddSeat(ctx, e.Admin, "r", "z", parley.Role("king")); code(t, err) != parley.EINVALID {
		t.Errorf("role king: %v, want EINVALID", err)
	}
	if _, _, err := e.Svc.AddSeat(ctx, e.Admin, "nowhere", "z", parley.RoleAgent); code(t, err) != parley.ENOTFOUND {
		t.Errorf("seat in no room: %v, want ENOTFOUND", err)
	}
	if _, _, err := e.Svc.AddSeat(ctx, seats["a"], "r", "z", parley.RoleAgent); code(t, err) != parley.EFORBIDDEN {
		t.Errorf("agent adds a seat: %v, want EFORBIDDEN", err)
	}
	if _, _, err := e.Svc.AddSeat(ctx, seats["boss"], "r", "z", parley.RoleAgent); err != nil {
		t.Errorf("admin seat adds a seat: %v", err)
	}
	list := must(e.Svc.Seats(ctx, seats["yu"], "r"))(t)
	roles := map[string]parley.Role{}
	for _, s := range list {
		roles[s.Name] = s.Role
		if s.Room != "r" || s.CreatedAt.IsZero() || !s.Active() {
			t.Errorf("seat %+v", s)
		}
	}
	want := map[string]parley.Role{"a": "agent", "b": "agent", "boss": "admin", "ci": "runner", "yu": "human", "z": "agent"}
	if fmt.Sprint(roles) != fmt.Sprint(want) {
		t.Errorf("seats %v, want %v", roles, want)
	}
}

func testAuthenticate(t *testing.T, e Env) {
	ctx := t.Context()
	_, toks := room(t, e, "r", nil, "a", "ci:runner")
	// The admin, with one room to see, is still the admin.
	if c, err := e.Svc.Authenticate(ctx, e.AdminToken); err != nil || !c.Admin || c.Seat != nil {
		t.Errorf("the admin's token with one room: %+v, %v", c, err)
	}
	room(t, e, "s", nil, "c")
	if c, err := e.Svc.Authenticate(ctx, e.AdminToken); err != nil || !c.Admin || c.Seat != nil {
		t.Errorf("the admin's token with two rooms: %+v, %v", c, err)
	}
	for _, tok := range []string{"pk_" + strings.Repeat("x", 43), "nope"} {
		if _, err := e.Svc.Authenticate(ctx, tok); code(t, err) != parley.EUNAUTHORIZED {
			t.Errorf("token %q: %v, want EUNAUTHORIZED", tok, err)
		}
	}
	c, err := e.Svc.Authenticate(ctx, toks["ci"])
	if err != nil || c.Admin || c.Seat == nil || c.Seat.Room != "r" || c.Seat.Name != "ci" || c.Seat.Role != parley.RoleRunner {
		t.Errorf("ci's token: %+v, %v", c, err)
	}
	if !e.Admin.Admin || e.Admin.Seat != nil {
		t.Errorf("the admin: %+v", e.Admin)
	}
}

func testRevoke(t *testing.T, e Env) {
	ctx := t.Context()
	seats, toks := room(t, e, "r", nil, "a", "b")
	if err := e.Svc.RevokeSeat(ctx, seats["a"], "r", "b"); code(t, err) != parley.EFORBIDDEN {
		t.Errorf("agent revokes: %v, want EFORBIDDEN", err)
	}
	if err := e.Svc.RevokeSeat(ctx, e.Admin, "r", "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Svc.Authenticate(ctx, toks["a"]); code(t, err) != parley.EUNAUTHORIZED {
		t.Errorf("revoked token: %v, want EUNAUTHORIZED", err)
	}
	if err := e.Svc.RevokeSeat(ctx, e.Admin, "r", "zed"); code(t, err) != parley.ENOTFOUND {
		t.Errorf("revoke no seat: %v, want ENOTFOUND", err)
	}
	// Addressing a revoked seat is refused; the name stays taken.
	if _, err := e.Svc.Post(ctx, seats["b"], "r", []byte("v1 note x to a n=1\nfact\n"), ""); code(t, err) != parley.EINVALID {
		t.Errorf("post to a revoked seat: %v, want EINVALID", err)
	}
	if _, _, err := e.Svc.AddSeat(ctx, e.Admin, "r", "a", parley.RoleAgent); code(t, err) != parley.ECONFLICT {
		t.Errorf("re-add a revoked name: %v, want ECONFLICT", err)
	}
	for _, s := range must(e.Svc.Seats(ctx, e.Admin, "r"))(t) {
		if (s.Name == "a") == s.Active() {
			t.Errorf("seat %s: active %v after revoking a", s.Name, s.Active())
		}
	}
	if _, err := e.Svc.RotateSeat(ctx, e.Admin, "r", "a"); code(t, err) != parley.EINVALID {
		t.Errorf("rotate a revoked seat: %v, want EINVALID", err)
	}
}

func testRotate(t *testing.T, e Env) {
	ctx := t.Context()
	seats, toks := room(t, e, "r", nil, "a", "b")
	newTok, err := e.Svc.RotateSeat(ctx, e.Admin, "r", "b")
	if err != nil || newTok == toks["b"] || !strings.HasPrefix(newTok, "pk_") {
		t.Fatalf("rotate: %q, %v", newTok, err)
	}
	if _, err := e.Svc.Authenticate(ctx, toks["b"]); code(t, err) != parley.EUNAUTHORIZED {
		t.Errorf("old token after rotation: %v, want EUNAUTHORIZED", err)
	}
	c, err := e.Svc.Authenticate(ctx, newTok)
	if err != nil || c.Seat == nil || c.Seat.Name != "b" {
		t.Fatalf("new token: %+v, %v", c, err)
	}
	if _, err := e.Svc.Post(ctx, c, "r", []byte("v1 note x to a n=1\nfact\n"), ""); err != nil {
		t.Errorf("post with the new token: %v", err)
	}
	if _, err := e.Svc.RotateSeat(ctx, seats["a"], "r", "b"); code(t, err) != parley.EFORBIDDEN {
		t.Errorf("agent rotates: %v, want EFORBIDDEN", err)
	}
	if _, err := e.Svc.RotateSeat(ctx, e.Admin, "r", "zed"); code(t, err) != parley.ENOTFOUND {
		t.Errorf("rotate no seat: %v, want ENOTFOUND", err)
	}
}

var header = func(seq int, seat string) string { return fmt.Sprintf("#%d %s ", seq, seat) }

func testPostAndHistory(t *testing.T, e Env) {
	seats, _ := room(t, e, "demo", nil, "lead", "builder", "yu:human")
	r1 := post(t, e, seats["lead"], "demo", p1Due)
	if r1.Seq != 1 || r1.Tokens != 125 || r1.Replay {
		t.Errorf("p1: %+v, want seq 1 and 125 tokens (the study's count)", r1)
	}
	r2 := post(t, e, seats["builder"], "demo", p3Due)
	if r2.Seq != 2 || r2.Tokens < 140 {
		t.Errorf("p3: %+v, want seq 2 and about 147 tokens", r2)
	}
	full := history(t, e, seats["yu"], "demo", 0)
	if !strings.HasPrefix(full, header(1, "lead")) || !strings.Contains(full, "\n"+p1Due+"\n"+header(2, "builder")) || !strings.HasSuffix(full, p3Due+"\n") {
		t.Errorf("history:\n%s", full)
	}
	if other := history(t, e, seats["lead"], "demo", 0); other != full {
		t.Errorf("history differs between readers")
	}
	if _, last, err := e.Svc.History(t.Context(), e.Admin, "demo", 0, 0); err != nil || last != 2 {
		t.Errorf("admin's history: last %d, %v", last, err)
	}
}

func testPostRefusals(t *testing.T, e Env) {
	ctx := t.Context()
	seats, _ := room(t, e, "r", &parley.Policy{MaxMessageBytes: 200, SeatBurst: 1000}, "a", "b")
	others, _ := room(t, e, "other", nil, "c")
	ok := "v1 note x to b n=1\nfact\n"
	tests := []struct {
		name   string
		seat   *parley.Caller
		body   string
		code   string
		within string
	}{
		{"another room's seat", others["c"], ok, parley.EFORBIDDEN, "sits in room other"},
		{"too large", seats["a"], "v1 note x to b n=1\n" + strings.Repeat("word ", 50), parley.ETOOLARGE, "at most 200"},
		{"empty", seats["a"], " \n", parley.EINVALID, "empty"},
		{"not utf-8", seats["a"], "v1 note x to b n=1\nfa\xffct\n", parley.EINVALID, "not valid UTF-8"},
		{"NUL", seats["a"], "v1 note x to b n=1\nfact\x00\n", parley.EINVALID, "control character U+0000"},
		{"forged header", seats["a"], "v1 note x to b n=2\nfact\n#7 b 20260917T090005Z\n", parley.EINVALID, "starts like a history header"},
		{"plain text in a strict room", seats["a"], "hello b, the limiter is done\n", parley.EINVALID, "neither"},
		{"unknown seat", seats["a"], "v1 note x to zed n=1\nfact\n", parley.EINVALID, "`zed` does not sit in this room"},
		{"re of nothing", seats["a"], "v1 answer x to b re 99 n=1\nfact\n", parley.EINVALID, "no message #99"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.Svc.Post(ctx, tt.seat, "r", []byte(tt.body), "")
			if code(t, err) != tt.code || !strings.Contains(parley.ErrorMessage(err), tt.within) {
				t.Errorf("got %v, want %s containing %q", err, tt.code, tt.within)
			}
			var pe *parley.Error
			if errors.As(err, &pe) && pe.Hint == "" {
				t.Errorf("%v has no hint", err)
			}
		})
	}
	if _, last, _ := e.Svc.History(ctx, seats["a"], "r", 0, 0); last != 0 {
		t.Errorf("refused posts stored messages up to #%d", last)
	}
	if _, err := e.Svc.Post(ctx, seats["a"], "nowhere", []byte(ok), ""); code(t, err) == "" {
		t.Errorf("post to no room was accepted")
	}
}

func testAdminHasNoSeat(t *testing.T, e Env) {
	ctx := t.Context()
	room(t, e, "r", nil, "a")
	if _, err := e.Svc.Post(ctx, e.Admin, "r", []byte("v1 note x to a n=1\nfact\n"), ""); code(t, err) != parley.EFORBIDDEN {
		t.Errorf("admin posts: %v, want EFORBIDDEN", err)
	}
	if _, err := e.Svc.Inbox(ctx, e.Admin, "r"); code(t, err) != parley.EFORBIDDEN {
		t.Errorf("admin's inbox: %v, want EFORBIDDEN", err)
	}
}

func testDedup(t *testing.T, e Env) {
	seats, _ := room(t, e, "r", nil, "a", "b")
	first := post(t, e, seats["a"], "r", note(1))
	_, err := e.Svc.Post(t.Context(), seats["a"], "r", []byte(note(1)+"\n\n"), "")
	if code(t, err) != parley.ECONFLICT || field(err, "seq") != first.Seq {
		t.Fatalf("repeat: %v (seq %#v), want ECONFLICT with seq %d", err, field(err, "seq"), first.Seq)
	}
	// Another seat saying the same is not a repeat of its own.
	if _, err := e.Svc.Post(t.Context(), seats["b"], "r", []byte(note(1)), ""); err != nil {
		t.Errorf("b says what a said: %v", err)
	}
}

func testIdempotency(t *testing.T, e Env) {
	ctx := t.Context()
	seats, _ := room(t, e, "r", nil, "a")
	r1, err := e.Svc.Post(ctx, seats["a"], "r", []byte(note(1)), "key-1")
	if err != nil || r1.Replay {
		t.Fatalf("first post: %+v, %v", r1, err)
	}
	again, err := e.Svc.Post(ctx, seats["a"], "r", []byte(note(1)), "key-1")
	if err != nil || !again.Replay || again.Seq != r1.Seq {
		t.Errorf("retry: %+v, %v; want a replay of #%d", again, err, r1.Seq)
	}
	if _, last, _ := e.Svc.History(ctx, seats["a"], "r", 0, 0); last != 1 {
		t.Errorf("last seq %d after a replay, want 1", last)
	}
	r2, err := e.Svc.Post(ctx, seats["a"], "r", []byte(note(2)), "key-2")
	if err != nil || r2.Seq != 2 || r2.Replay {
		t.Errorf("another key: %+v, %v", r2, err)
	}
}

func testRateLimit(t *testing.T, e Env) {
	seats, _ := room(t, e, "r", &parley.Policy{SeatMessagesPerMinute: 1, SeatBurst: 2}, "a")
	post(t, e, seats["a"], "r", note(1))
	post(t, e, seats["a"], "r", note(2))
	_, err := e.Svc.Post(t.Context(), seats["a"], "r", []byte(note(3)), "")
	secs, _ := field(err, "retry_after").(int)
	if code(t, err) != parley.ERATELIMIT || secs < 1 || secs > 60 {
		t.Errorf("third post: %v (retry_after %#v), want ERATELIMIT with whole seconds", err, field(err, "retry_after"))
	}
}

func testDiagnostics(t *testing.T, e Env) {
	seats, _ := room(t, e, "r", nil, "a", "b")
	_, err := e.Svc.Post(t.Context(), seats["a"], "r", []byte("v1 note x to b n=3\nfact\n"), "")
	diags, _ := field(err, "diagnostics").([]parley.Diagnostic)
	if code(t, err) != parley.EINVALID || len(diags) == 0 || diags[0].Code != "n-mismatch" || diags[0].Line != 1 || diags[0].Col == 0 || diags[0].Severity != "error" {
		t.Fatalf("n=3 over one fact: %v, diagnostics %+v", err, diags)
	}
}

func testMoreDiagnostics(t *testing.T, e Env) {
	seats, _ := room(t, e, "r", nil, "a")
	head := "REQ|DEV|return:a|p:1|aacp:1.1|to:all"
	body := head + strings.Repeat("|", 20000-len(head))
	_, err := e.Svc.Post(t.Context(), seats["a"], "r", []byte(body), "")
	ds, _ := field(err, "diagnostics").([]parley.Diagnostic)
	more, _ := field(err, "more_diagnostics").(int)
	if code(t, err) != parley.EINVALID || len(ds) != 20 || more < 100 {
		t.Fatalf("%v: %d diagnostics, %d more", err, len(ds), more)
	}
	lint, err := e.Svc.Lint(t.Context(), seats["a"], "r", []byte(body))
	if err != nil || len(lint) != 21 || lint[20].More != more || lint[20].Code != "more-diagnostics" {
		t.Fatalf("lint: %d diagnostics, %v", len(lint), err)
	}
}

func testHistorySuffix(t *testing.T, e Env) {
	ctx := t.Context()
	seats, _ := room(t, e, "r", &parley.Policy{SeatBurst: 1000}, "a", "b")
	const n = 12
	for i := range n {
		c := seats["a"]
		if i%3 == 0 {
			c = seats["b"]
		}
		post(t, e, c, "r", note(i))
	}
	full := history(t, e, seats["a"], "r", 0)
	for k := int64(0); k <= n; k++ {
		suffix := history(t, e, seats["b"], "r", k)
		if !strings.HasSuffix(full, suffix) || (k > 0 && len(suffix) >= len(full)) || (k < n && !strings.HasPrefix(suffix, fmt.Sprintf("#%d ", k+1))) {
			t.Errorf("after=%d is not the proper suffix:\n%s", k, suffix)
		}
		// Pages of any size, concatenated, are the same bytes.
		for _, limit := range []int{1, 5} {
			var b strings.Builder
			after := k
			for {
				page, last, err := e.Svc.History(ctx, seats["b"], "r", after, limit)
				if err != nil {
					t.Fatal(err)
				}
				if last == after {
					break
				}
				if got := int(last - after); got > limit {
					t.Fatalf("limit %d after %d: a page of %d messages", limit, after, got)
				}
				b.Write(page)
				after = last
			}
			if b.String() != suffix {
				t.Errorf("pages of %d after %d differ from one read", limit, k)
			}
		}
	}
}

func testHistoryLimitAndEmpty(t *testing.T, e Env) {
	ctx := t.Context()
	seats, _ := room(t, e, "r", nil, "a", "b")
	for i := range 3 {
		post(t, e, seats["a"], "r", note(i))
	}
	b, last, err := e.Svc.History(ctx, seats["b"], "r", 1, 1)
	if err != nil || last != 2 || !strings.HasPrefix(string(b), "#2 a ") || strings.Contains(string(b), "#3") {
		t.Errorf("after=1 limit=1: last %d, %v\n%s", last, err, b)
	}
	b, last, err = e.Svc.History(ctx, seats["b"], "r", 3, 0)
	if err != nil || last != 3 || len(b) != 0 {
		t.Errorf("after=3: %q, last %d, %v; want empty and 3", b, last, err)
	}
	if _, _, err := e.Svc.History(ctx, seats["b"], "r", -1, 0); code(t, err) != parley.EINVALID {
		t.Errorf("after=-1: %v, want EINVALID", err)
	}
}

func testHistoryPage(t *testing.T, e Env) {
	ctx := t.Context()
	seats, _ := room(t, e, "r", nil, "a")
	for i := range 3 {
		post(t, e, seats["a"], "r", note(i))
	}
	for _, tc := range []struct {
		after       int64
		limit       int
		last        int64
		full, empty bool
	}{{0, 0, 3, false, false}, {0, 2, 2, true, false}, {1, 2, 3, true, false}, {2, 5, 3, false, false}, {3, 0, 3, false, true}} {
		want, _, err := e.Svc.History(ctx, seats["a"], "r", tc.after, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		p, err := e.Svc.HistoryPage(ctx, seats["a"], "r", tc.after, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := p.Stream(&buf); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(buf.Bytes())
		if p.After != tc.after || p.Last != tc.last || p.Full != tc.full || p.Size != int64(buf.Len()) ||
			!bytes.Equal(p.Sum, sum[:]) || buf.String() != string(want) || (buf.Len() == 0) != tc.empty {
			t.Errorf("after %d limit %d: page after %d last %d full %v size %d (streamed %d); want last %d full %v",
				tc.after, tc.limit, p.After, p.Last, p.Full, p.Size, buf.Len(), tc.last, tc.full)
		}
	}
}

func testHistoryAccess(t *testing.T, e Env) {
	ctx := t.Context()
	room(t, e, "r", nil, "a")
	others, _ := room(t, e, "s", nil, "c")
	if _, _, err := e.Svc.History(ctx, others["c"], "r", 0, 0); code(t, err) != parley.EFORBIDDEN {
		t.Errorf("history of another room: %v, want EFORBIDDEN", err)
	}
	if _, err := e.Svc.HistoryPage(ctx, others["c"], "r", 0, 0); code(t, err) != parley.EFORBIDDEN {
		t.Errorf("page of another room: %v, want EFORBIDDEN", err)
	}
	if _, _, err := e.Svc.History(ctx, e.Admin, "nowhere", 0, 0); code(t, err) != parley.ENOTFOUND {
		t.Errorf("history of no room: %v, want ENOTFOUND", err)
	}
}

func testInbox(t *testing.T, e Env) {
	ctx := t.Context()
	seats, _ := room(t, e, "demo", nil, "lead", "builder", "yu:human")
	ask := post(t, e, seats["builder"], "demo", p3Due)
	in := must(e.Svc.Inbox(ctx, seats["yu"], "demo"))(t)
	due := time.Date(2099, 9, 18, 9, 0, 0, 0, time.UTC)
	if in.Seat != "yu" || in.Room != "demo" || len(in.Unanswered) != 1 || in.Unanswered[0].Seq != ask.Seq || in.Unanswered[0].From != "builder" ||
		in.Unanswered[0].Due == nil || !in.Unanswered[0].Due.Equal(due) || in.Unanswered[0].Default != "silence past the ask time→A with the fail-open" {
		t.Fatalf("yu's inbox: %+v", in)
	}
	if b := must(e.Svc.Inbox(ctx, seats["builder"], "demo"))(t); len(b.Open) != 1 || b.Open[0].Seq != ask.Seq || len(b.Unanswered) != 0 {
		t.Errorf("builder's inbox: %+v", b)
	}
	post(t, e, seats["yu"], "demo", fmt.Sprintf("v1 answer limiter to builder re %d n=1\nA, with the fail-open\n", ask.Seq))
	if in := must(e.Svc.Inbox(ctx, seats["yu"], "demo"))(t); len(in.Unanswered) != 0 {
		t.Errorf("yu's inbox after answering: %+v", in.Unanswered)
	}
	if b := must(e.Svc.Inbox(ctx, seats["builder"], "demo"))(t); len(b.Open) != 0 {
		t.Errorf("builder's open asks after the answer: %+v", b.Open)
	}
}

func testAskToSeveralSeats(t *testing.T, e Env) {
	ctx := t.Context()
	seats, _ := room(t, e, "r", nil, "lead", "yu", "ops", "ci")
	ask := post(t, e, seats["lead"], "r", "v1 request deploy to yu,ops n=1\nask go or no-go, 20990918T0900Z\n")
	for seat, want := range map[string]int{"yu": 1, "ops": 1, "ci": 0} {
		if in := must(e.Svc.Inbox(ctx, seats[seat], "r"))(t); len(in.Unanswered) != want {
			t.Errorf("%s's inbox: %+v, want %d asks", seat, in.Unanswered, want)
		}
	}
	post(t, e, seats["ci"], "r", fmt.Sprintf("v1 note deploy to lead re %d n=1\noutcome pipeline green\n", ask.Seq))
	if in := must(e.Svc.Inbox(ctx, seats["yu"], "r"))(t); len(in.Unanswered) != 1 {
		t.Errorf("ci's re closed the ask: %+v", in.Unanswered)
	}
	post(t, e, seats["ops"], "r", fmt.Sprintf("v1 answer deploy to lead re %d n=1\noutcome go\n", ask.Seq))
	for _, seat := range []string{"yu", "ops"} {
		if in := must(e.Svc.Inbox(ctx, seats[seat], "r"))(t); len(in.Unanswered) != 0 {
			t.Errorf("%s still owes %+v after ops answered", seat, in.Unanswered)
		}
	}
}

func testState(t *testing.T, e Env) {
	ctx := t.Context()
	seats, _ := room(t, e, "demo", nil, "lead", "builder", "yu:human")
	r1 := post(t, e, seats["builder"], "demo", p3Due)
	r2 := post(t, e, seats["yu"], "demo", fmt.Sprintf("v1 answer limiter to builder re %d n=1\nA, with the fail-open\n", r1.Seq))
	st := must(e.Svc.State(ctx, seats["lead"], "demo", "limiter"))(t)
	if st.Room != "demo" || st.Topic != "limiter" || st.LastSeq != r2.Seq {
		t.Errorf("state head: %+v", st)
	}
	if len(st.Decisions) != 1 || st.Decisions[0].Seat != "yu" || st.Decisions[0].Text != "A, with the fail-open" || st.Decisions[0].Seq != r2.Seq {
		t.Errorf("decisions: %+v", st.Decisions)
	}
	if st.Tokens["builder"] != r1.Tokens || st.Tokens["yu"] != r2.Tokens {
		t.Errorf("tokens: %v, want builder=%d yu=%d", st.Tokens, r1.Tokens, r2.Tokens)
	}
	if len(st.OpenAsks) != 0 {
		t.Errorf("open asks after the answer: %+v", st.OpenAsks)
	}
	if _, err := e.Svc.State(ctx, seats["lead"], "demo", "nothing-here"); code(t, err) != parley.ENOTFOUND {
		t.Errorf("state of an unused topic: %v, want ENOTFOUND", err)
	}
	others, _ := room(t, e, "s", nil, "c")
	if _, err := e.Svc.State(ctx, others["c"], "demo", "limiter"); code(t, err) != parley.EFORBIDDEN {
		t.Errorf("state of another room: %v, want EFORBIDDEN", err)
	}
}

func testRuns(t *testing.T, e Env) {
	ctx := t.Context()
	seats, _ := room(t, e, "r", nil, "a", "ci:runner")
	run, err := e.Svc.PostRun(ctx, seats["ci"], "r", "application/json", []byte(`{"id":"ci-42","commit":"3f9a2c1","passed":12,"failed":0}`), "")
	if err != nil || run.ID != "ci-42" || run.Commit != "3f9a2c1" || run.Passed != 12 || run.Failed != 0 || run.Seat != "ci" || run.Room != "r" {
		t.Fatalf("run: %+v, %v", run, err)
	}
	if _, err := e.Svc.PostRun(ctx, seats["ci"], "r", "application/json", []byte(`{"id":"ci-42","passed":1,"failed":0}`), ""); code(t, err) != parley.ECONFLICT {
		t.Errorf("run ci-42 again: %v, want ECONFLICT", err)
	}
	if _, err := e.Svc.PostRun(ctx, seats["a"], "r", "application/json", []byte(`{"id":"x","passed":1,"failed":0}`), ""); code(t, err) != parley.EFORBIDDEN {
		t.Errorf("agent posts a run: %v, want EFORBIDDEN", err)
	}
	goTest := `{"Action":"pass","Package":"p","Test":"TestA"}` + "\n" + `{"Action":"fail","Package":"p","Test":"TestB"}` + "\n"
	run, err = e.Svc.PostRun(ctx, seats["ci"], "r", "application/x-ndjson", []byte(goTest), "ci-43")
	if err != nil || run.ID != "ci-43" || run.Passed != 1 || run.Failed != 1 {
		t.Errorf("go test -json run: %+v, %v", run, err)
	}
	// A done citing the run is checked against it.
	res := post(t, e, seats["ci"], "r", "v1 report limiter to a n=2\ndone limiter tests\nev run ci-42\n")
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "verified") || !strings.Contains(res.Notes[0], "ci-42") {
		t.Errorf("notes of a done citing ci-42: %q", res.Notes)
	}
}

func testStats(t *testing.T, e Env) {
	ctx := t.Context()
	seats, _ := room(t, e, "r", nil, "a", "b")
	r1 := post(t, e, seats["a"], "r", note(1))
	r2 := post(t, e, seats["a"], "r", note(2))
	if _, err := e.Svc.Post(ctx, seats["a"], "r", []byte(note(1)), ""); code(t, err) != parley.ECONFLICT {
		t.Fatalf("repeat: %v", err)
	}
	history(t, e, seats["b"], "r", 0)
	st := must(e.Svc.Stats(ctx, seats["b"], "r"))(t)
	if st.Room != "r" || st.Messages != 2 || st.TokensPosted["a"] != int64(r1.Tokens+r2.Tokens) {
		t.Errorf("stats: messages %d, posted %v; want 2 and a=%d", st.Messages, st.TokensPosted, r1.Tokens+r2.Tokens)
	}
	if st.DedupTokens["a"] == 0 || st.ReadTokens["b"] < int64(r1.Tokens+r2.Tokens) {
		t.Errorf("stats: dedup %v, read %v", st.DedupTokens, st.ReadTokens)
	}
	others, _ := room(t, e, "s", nil, "c")
	if _, err := e.Svc.Stats(ctx, others["c"], "r"); code(t, err) != parley.EFORBIDDEN {
		t.Errorf("stats of another room: %v, want EFORBIDDEN", err)
	}
}

func testLint(t *testing.T, e Env) {
	ctx := t.Context()
	seats, _ := room(t, e, "r", nil, "a", "b")
	if ds, err := e.Svc.Lint(ctx, seats["a"], "r", []byte(note(1))); err != nil || len(ds) != 0 {
		t.Errorf("lint of a good draft: %+v, %v", ds, err)
	}
	ds, err := e.Svc.Lint(ctx, seats["a"], "r", []byte("v1 note x to zed n=3\nfact\n"))
	codes := map[string]bool{}
	for _, d := range ds {
		codes[d.Code] = true
	}
	if err != nil || !codes["n-mismatch"] || len(ds) < 2 {
		t.Errorf("lint of a bad draft: %+v, %v", ds, err)
	}
	if _, last, _ := e.Svc.History(ctx, seats["a"], "r", 0, 0); last != 0 {
		t.Errorf("lint posted: last seq %d", last)
	}
	// A linted draft is not a repeat of anything: it can still be posted.
	post(t, e, seats["a"], "r", note(1))
}

func testWatch(t *testing.T, e Env) {
	seats, _ := room(t, e, "r", nil, "a")
	post(t, e, seats["a"], "r", note(1))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	wake, err := e.Svc.Watch(ctx, seats["a"], "r")
	if err != nil {
		t.Fatal(err)
	}
	res := post(t, e, seats["a"], "r", note(2))
	deadline := time.After(10 * time.Second)
	for {
		select {
		case seq, ok := <-wake:
			if !ok {
				t.Fatal("the watch ended before the post was seen")
			}
			if seq >= res.Seq {
				cancel()
				// The channel closes once ctx ends.
				for range wake {
				}
				return
			}
		case <-deadline:
			t.Fatalf("no wake for #%d within 10s", res.Seq)
		}
	}
}

func testHold(t *testing.T, e Env) {
	ctx := t.Context()
	seats, _ := room(t, e, "r", nil, "a", "b")
	hctx, cancel, err := e.Svc.Hold(ctx, seats["a"])
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	if hctx.Err() != nil {
		t.Errorf("a fresh hold has ended: %v", hctx.Err())
	}
	if err := e.Svc.RevokeSeat(ctx, e.Admin, "r", "b"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Svc.Hold(ctx, seats["b"]); code(t, err) != parley.EUNAUTHORIZED {
		t.Errorf("hold of a revoked seat: %v, want EUNAUTHORIZED", err)
	}
	actx, acancel, err := e.Svc.Hold(ctx, e.Admin)
	if err != nil || actx.Err() != nil {
		t.Errorf("admin's hold: %v", err)
	}
	acancel()
}

func testAACPAndLenient(t *testing.T, e Env) {
	seats, _ := room(t, e, "r", nil, "builder", "lead")
	res := post(t, e, seats["builder"], "r", "REPORT|IT|return:lead|p:1|aacp:1.1|to:lead|res:limiter merged\n")
	if res.Seq != 1 || res.Tokens == 0 {
		t.Errorf("AACP post: %+v", res)
	}
	loose, _ := room(t, e, "loose", &parley.Policy{Format: parley.PolicyLenient}, "a", "b")
	res = post(t, e, loose["a"], "loose", "the limiter is merged\n")
	if len(res.Warnings) != 1 || res.Warnings[0].Code != "plain-text" {
		t.Errorf("lenient plain text warnings: %+v", res.Warnings)
	}
}

// testMessages: structured reads hold the same messages, seat, notes and tokens as the history
// text of the same range, say the room's last seq, page like history, give the latest page for
// parley.Latest, and keep other rooms' seats out.
func testMessages(t *testing.T, e Env) {
	ctx := t.Context()
	seats, _ := room(t, e, "r", &parley.Policy{SeatBurst: 1000}, "a", "b")
	others, _ := room(t, e, "o", nil, "x")
	var posted []*parley.PostResult
	for i := range 7 {
		c := seats["a"]
		if i%2 == 1 {
			c = seats["b"]
		}
		posted = append(posted, post(t, e, c, "r", note(i)))
	}
	msgs, last, err := e.Svc.Messages(ctx, seats["a"], "r", 2, 3, parley.CountRead)
	if err != nil {
		t.Fatal(err)
	}
	if last != 7 || len(msgs) != 3 || msgs[0].Seq != 3 || msgs[2].Seq != 5 {
		t.Fatalf("after 2, limit 3: last %d and %d messages from #%d", last, len(msgs), msgs[0].Seq)
	}
	text, _, err := e.Svc.History(ctx, seats["a"], "r", 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "#%d %s %s\n%s\n", m.Seq, m.Seat, m.Time.UTC().Format("20060102T150405Z"), m.Body)
		if m.Tokens != posted[m.Seq-1].Tokens {
			t.Errorf("#%d: %d tokens, the post was told %d", m.Seq, m.Tokens, posted[m.Seq-1].Tokens)
		}
		if want := fmt.Sprintf("fact number %d", m.Seq-1); !strings.Contains(m.Body, want) {
			t.Errorf("#%d: body %q lacks %q", m.Seq, m.Body, want)
		}
	}
	if b.String() != string(text) {
		t.Errorf("the messages do not render as history:\n%s\nhistory:\n%s", b.String(), text)
	}
	latest, last, err := e.Svc.Messages(ctx, seats["b"], "r", parley.Latest, 2, parley.CountRead)
	if err != nil {
		t.Fatal(err)
	}
	if last != 7 || len(latest) != 2 || latest[0].Seq != 6 || latest[1].Seq != 7 {
		t.Errorf("latest 2: last %d, %d messages", last, len(latest))
	}
	if _, _, err := e.Svc.Messages(ctx, others["x"], "r", 0, 0, parley.CountRead); code(t, err) != parley.EFORBIDDEN {
		t.Errorf("another room's seat reads messages: %v", err)
	}
}
