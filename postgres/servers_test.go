package postgres_test

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/pgtest"
	"github.com/parleyhq/parley/postgres"
	"github.com/parleyhq/parley/room"
)

// twoServers are two room services, each on a Store of its own, on one database: two `parley
// serve` processes behind a load balancer.
type twoServers struct {
	st    [2]*postgres.Store
	svc   [2]*room.Service
	admin [2]*parley.Caller
}

const serversAdmin = "pk_admin-token-of-the-two-servers-test-000000"

func startTwoServers(t *testing.T) *twoServers {
	t.Helper()
	dsn := pgtest.DSN(t)
	var ts twoServers
	for i := range ts.svc {
		ts.st[i] = MustOpen(t, dsn)
		svc, err := room.New(ts.st[i], room.Config{AdminToken: serversAdmin, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		ts.svc[i] = svc
		if ts.admin[i], err = svc.Authenticate(t.Context(), serversAdmin); err != nil {
			t.Fatal(err)
		}
	}
	return &ts
}

// room creates a room on server 0 with policy p and seats, and returns their tokens.
func (ts *twoServers) room(t *testing.T, name string, p *parley.Policy, seats ...string) map[string]string {
	t.Helper()
	if _, err := ts.svc[0].CreateRoom(t.Context(), ts.admin[0], name, p); err != nil {
		t.Fatal(err)
	}
	tok := map[string]string{}
	for _, s := range seats {
		role := parley.RoleAgent
		if s == "ci" {
			role = parley.RoleRunner
		}
		_, tk, err := ts.svc[0].AddSeat(t.Context(), ts.admin[0], name, s, role)
		if err != nil {
			t.Fatal(err)
		}
		tok[s] = tk
	}
	return tok
}

// post authenticates token on server i and posts body to room, as one HTTP request would.
func (ts *twoServers) post(t *testing.T, i int, room, token, body string) (*parley.PostResult, error) {
	t.Helper()
	c, err := ts.svc[i].Authenticate(t.Context(), token)
	if err != nil {
		return nil, err
	}
	return ts.svc[i].Post(t.Context(), c, room, []byte(body), "")
}

func (ts *twoServers) lastSeq(t *testing.T, room string) int64 {
	t.Helper()
	n, err := ts.st[1].LastSeq(t.Context(), room)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := parley.ErrorCode(err); (err == nil && code != "") || (err != nil && got != code) {
		t.Fatalf("%s: %v, want %q", what, err, code)
	}
}

// TestPostsAcrossServers checks what a post on one server owes to what the other did just
// before, with no wait between them: a revocation or a rotation refuses the old token at once,
// a run just posted is found by the next post citing it, and the rate caps count every post
// of both servers (stored, refused, refused for lack of tokens) as one server would.
func TestPostsAcrossServers(t *testing.T) {
	ts := startTwoServers(t)
	ctx := t.Context()
	note := func(i int) string { return fmt.Sprintf("v1 note x to all n=1\nfact %d\n", i) }

	t.Run("revocation", func(t *testing.T) {
		tok := ts.room(t, "rv", nil, "w", "v")
		// Server 1 has this token's seat in hand, as a request authenticated just before.
		early, err := ts.svc[1].Authenticate(ctx, tok["w"])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ts.post(t, 1, "rv", tok["w"], note(1)); err != nil {
			t.Fatal(err)
		}
		if err := ts.svc[0].RevokeSeat(ctx, ts.admin[0], "rv", "w"); err != nil {
			t.Fatal(err)
		}
		_, err = ts.post(t, 1, "rv", tok["w"], note(2))
		wantCode(t, "the next post on the other server", err, parley.EUNAUTHORIZED)
		_, err = ts.svc[1].Post(ctx, early, "rv", []byte(note(3)), "")
		wantCode(t, "a post authenticated before the revocation", err, parley.EFORBIDDEN)
		if n := ts.lastSeq(t, "rv"); n != 1 {
			t.Errorf("the room holds %d messages, want 1", n)
		}
	})

	t.Run("rotation", func(t *testing.T) {
		tok := ts.room(t, "ro", nil, "w")
		if _, err := ts.post(t, 1, "ro", tok["w"], note(1)); err != nil {
			t.Fatal(err)
		}
		fresh, err := ts.svc[0].RotateSeat(ctx, ts.admin[0], "ro", "w")
		if err != nil {
			t.Fatal(err)
		}
		_, err = ts.post(t, 1, "ro", tok["w"], note(2))
		wantCode(t, "the old token on the other server", err, parley.EUNAUTHORIZED)
		if _, err := ts.post(t, 1, "ro", fresh, note(3)); err != nil {
			t.Fatalf("the new token on the other server: %v", err)
		}
	})

	t.Run("run", func(t *testing.T) {
		tok := ts.room(t, "rn", nil, "w", "ci")
		n := 0
		cite := func(i int, id string) string {
			n++
			res, err := ts.post(t, i, "rn", tok["w"], fmt.Sprintf("v1 report x to all n=2\ndone#1 suite green, try %d\nev#1 run %s\n", n, id))
			if err != nil {
				t.Fatal(err)
			}
			return strings.Join(res.Notes, "\n")
		}
		if got, want := cite(1, "ci-1"), "! ev#1 unverified: run ci-1 not found; a runner seat must post it first"; got != want {
			t.Errorf("a run not posted yet: %q, want %q", got, want)
		}
		ci, _ := ts.svc[0].Authenticate(ctx, tok["ci"])
		if _, err := ts.svc[0].PostRun(ctx, ci, "rn", "application/json", []byte(`{"id":"ci-1","passed":12,"failed":0}`), ""); err != nil {
			t.Fatal(err)
		}
		if got, want := cite(1, "ci-1"), "! ev#1 verified: run ci-1, 12 passed"; got != want {
			t.Errorf("a run the other server stored just before: %q, want %q", got, want)
		}
	})

	t.Run("stats", func(t *testing.T) {
		// Counters of both servers, each flushed in one statement, add up.
		tok := ts.room(t, "st", nil, "w", "v")
		want := map[string]int64{}
		for i := range 5 {
			seat := []string{"w", "v"}[i%2]
			res, err := ts.post(t, i%2, "st", tok[seat], note(i))
			if err != nil {
				t.Fatal(err)
			}
			want[seat] += int64(res.Tokens)
		}
		ts.svc[1].Stats(ctx, ts.admin[1], "st") // flushes server 1's counters
		st, err := ts.svc[0].Stats(ctx, ts.admin[0], "st")
		if err != nil {
			t.Fatal(err)
		}
		if st.Counters["w"]["messages"] != 3 || st.Counters["v"]["messages"] != 2 || st.TokensPosted["w"] != want["w"] || st.TokensPosted["v"] != want["v"] {
			t.Errorf("counters %v, want 3 and 2 messages, tokens %v", st.Counters, want)
		}
	})

	// Four messages a seat, one a minute: nothing refills during the test.
	capped := &parley.Policy{SeatMessagesPerMinute: 1, SeatBurst: 4, SeatTokensPerMinute: 60, RoomMessagesPerMinute: 1e6, RoomBurst: 1 << 20}

	t.Run("seat cap", func(t *testing.T) {
		tok := ts.room(t, "cap", capped, "w", "v")
		for i := range 4 {
			if _, err := ts.post(t, i%2, "cap", tok["w"], note(i)); err != nil {
				t.Fatalf("post %d of the burst through server %d: %v", i, i%2, err)
			}
		}
		for i := range 2 {
			_, err := ts.post(t, i, "cap", tok["w"], note(10+i))
			wantCode(t, fmt.Sprintf("a fifth post through server %d", i), err, parley.ERATELIMIT)
		}
		// Over the cap, a post that is wrong in other ways too is answered the 429.
		_, err := ts.post(t, 1, "cap", tok["w"], "not a message")
		wantCode(t, "an invalid post over the cap", err, parley.ERATELIMIT)
		if _, err := ts.post(t, 0, "cap", tok["v"], note(20)); err != nil {
			t.Fatalf("another seat of the room: %v", err)
		}
	})

	t.Run("refusals count", func(t *testing.T) {
		tok := ts.room(t, "ref", capped, "w")
		for i := range 4 {
			_, err := ts.post(t, i%2, "ref", tok["w"], "not a message")
			wantCode(t, fmt.Sprintf("invalid post %d through server %d", i, i%2), err, parley.EINVALID)
		}
		_, err := ts.post(t, 1, "ref", tok["w"], note(1))
		wantCode(t, "a good post after four refusals", err, parley.ERATELIMIT)
	})

	t.Run("tokens", func(t *testing.T) {
		// 200 tokens a minute: a body of over 100 passes once; the second is refused for
		// lack of tokens and keeps its message, so the seat has two messages left, not three.
		p := *capped
		p.SeatTokensPerMinute = 200
		tok := ts.room(t, "tok", &p, "w")
		big := func(i int) string {
			return fmt.Sprintf("v1 note x to all n=1\nfact %d %s\n", i, strings.Repeat("alpha beta gamma ", 40))
		}
		res, err := ts.post(t, 0, "tok", tok["w"], big(1))
		if err != nil || res.Tokens <= 100 || res.Tokens > 170 {
			t.Fatalf("the first large post: %+v, %v; want 101 to 170 tokens", res, err)
		}
		_, err = ts.post(t, 1, "tok", tok["w"], big(2))
		wantCode(t, "the second large post", err, parley.ERATELIMIT)
		if !strings.Contains(err.Error(), "tokens a minute") {
			t.Errorf("the second large post: %v, want the token cap", err)
		}
		for i := range 2 {
			if _, err := ts.post(t, i, "tok", tok["w"], fmt.Sprintf("v1 note x to all n=1\nsmall %d\n", i)); err != nil {
				t.Fatalf("small post %d: %v", i, err)
			}
		}
		_, err = ts.post(t, 0, "tok", tok["w"], "v1 note x to all n=1\nthird\n")
		wantCode(t, "a fifth message", err, parley.ERATELIMIT)
		if !strings.Contains(err.Error(), "messages a minute") {
			t.Errorf("a fifth message: %v, want the message cap", err)
		}
	})
}
