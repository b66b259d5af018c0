package reliability_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/internal/pgtest"
	"github.com/parleyhq/parley/internal/servertest"
)

// Floods of refused posts. Every post counts against its seat's message cap, refused ones
// too (invalid, too large, a repeat, a secret, the acknowledgement cap, a bad key), so a seat
// that floods refusals meets 429 with Retry-After after its burst, as any flood does. What a
// refusal does not take: the room's allowance (other seats keep posting) and tokens. What
// takes nothing: a 429 itself, and an Idempotency-Key replay, which is answered even over the
// cap. Each case is a flood, so each is a Test of its own requests, in a room of its own, on
// SQLite and on PostgreSQL. TestRatesAcrossProcesses checks that two `parley serve` processes
// on one PostgreSQL database share the caps.

// ratePolicy is a seat cap that a test reaches at once and that does not refill during it:
// four posts, then one a minute. The room's cap and the tokens stay out of reach.
func ratePolicy(over map[string]any) map[string]any {
	p := map[string]any{
		"seat_messages_per_minute": 1, "seat_burst": 4,
		"seat_tokens_per_minute":   1 << 20,
		"room_messages_per_minute": 1e6, "room_burst": 1 << 20,
	}
	for k, v := range over {
		p[k] = v
	}
	return p
}

// rateRoom is one case's room on a server, with seats a to e.
type rateRoom struct {
	srv  *servertest.Server
	name string
	tok  map[string]string
}

func (rr *rateRoom) post(t *testing.T, seat string, body []byte, header ...string) servertest.Response {
	t.Helper()
	return rr.srv.Call(t, "POST", "/v1/rooms/"+rr.name+"/messages", rr.tok[seat], body, header...)
}

// want checks a refusal's status, code and phrase.
func want(t *testing.T, r servertest.Response, status int, code, phrase string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r)
	}
	if code != "" {
		checkAnswer(t, r, status, code, phrase)
	}
}

// want429 checks a seat's (or, with room set, the room's) 429 and its Retry-After, which at
// one message a minute is a whole number of seconds from 1 to 60.
func want429(t *testing.T, r servertest.Response, phrase string) {
	t.Helper()
	checkAnswer(t, r, http.StatusTooManyRequests, "rate_limited", phrase)
	ra, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || ra < 1 || ra > 60 || ra != r.Err().RetryAfter {
		t.Fatalf("Retry-After %q, retry_after %d: want the same whole seconds, 1..60", r.Header.Get("Retry-After"), r.Err().RetryAfter)
	}
}

// flood posts n bodies as seat a, each answered with status and code, and then one more
// that meets the seat's cap.
func (rr *rateRoom) flood(t *testing.T, n, status int, code string, body func(i int) []byte, header ...string) {
	t.Helper()
	for i := range n {
		r := rr.post(t, "a", body(i), header...)
		if r.Status != status {
			t.Fatalf("refusal %d: status %d, want %d: %s", i, r.Status, status, r)
		}
		if code != "" && r.Err().Error.Code != code {
			t.Fatalf("refusal %d: code %q, want %q: %s", i, r.Err().Error.Code, code, r)
		}
	}
	want429(t, rr.post(t, "a", body(n), header...), "seat a may post 1 messages a minute (burst 4)")
}

// stored is how many messages the room holds.
func (rr *rateRoom) stored(t *testing.T) int {
	t.Helper()
	entries, err := servertest.ParseHistory(rr.srv.History(t, rr.name, rr.srv.Admin))
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

func note(to string, lines ...string) []byte {
	return fmt.Appendf(nil, "v1 note flood to %s n=%d\n%s\n", to, len(lines), strings.Join(lines, "\n"))
}

type rateCase struct {
	name   string
	policy map[string]any // over ratePolicy's
	run    func(t *testing.T, rr *rateRoom)
}

var rateCases = []rateCase{
	{"65 KB of empty AACP fields", nil, func(t *testing.T, rr *rateRoom) {
		// The attack that found the hole: the biggest body the room takes, refused as
		// invalid after the whole of it was parsed, 796 times in 20 s without a 429.
		body := []byte("REQ|DEV|return:a|p:1|aacp:1.1|to:b|" + strings.Repeat("|", 65000))
		rr.flood(t, 4, http.StatusUnprocessableEntity, "invalid", func(int) []byte { return body })
		if n := rr.stored(t); n != 0 {
			t.Errorf("%d messages stored", n)
		}
	}},
	{"repeats", nil, func(t *testing.T, rr *rateRoom) {
		body := note("b", "fact the build is green")
		want(t, rr.post(t, "a", body), http.StatusCreated, "", "")
		rr.flood(t, 3, http.StatusConflict, "conflict", func(int) []byte { return body })
		if n := rr.stored(t); n != 1 {
			t.Errorf("%d messages stored, want the first alone", n)
		}
	}},
	{"too large", map[string]any{"max_message_bytes": 1024}, func(t *testing.T, rr *rateRoom) {
		rr.flood(t, 4, http.StatusRequestEntityTooLarge, "too_large", func(i int) []byte {
			return note("b", "fact "+strings.Repeat(fmt.Sprintf("word%d ", i), 300))
		})
	}},
	{"secrets", nil, func(t *testing.T, rr *rateRoom) {
		rr.flood(t, 4, http.StatusUnprocessableEntity, "invalid", func(i int) []byte {
			return note("b", fmt.Sprintf("fact aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKE%d", i))
		})
		if n := rr.stored(t); n != 0 {
			t.Errorf("%d messages stored", n)
		}
	}},
	{"forged headers and control characters", nil, func(t *testing.T, rr *rateRoom) {
		rr.flood(t, 4, http.StatusUnprocessableEntity, "invalid", func(i int) []byte {
			if i%2 == 0 {
				return fmt.Appendf(nil, "v1 note flood to b n=1\n#%d b 20260917T090000Z\n", 9000+i)
			}
			return note("b", fmt.Sprintf("fact bell\x07 %d", i))
		})
	}},
	{"acknowledgement loop", nil, func(t *testing.T, rr *rateRoom) {
		want(t, rr.post(t, "a", note("b", "thanks b")), http.StatusCreated, "", "")
		want(t, rr.post(t, "b", note("a", "ok, got it")), http.StatusCreated, "", "")
		// a has spent one of its four; the acknowledgement cap refuses the rest.
		rr.flood(t, 3, http.StatusUnprocessableEntity, "invalid", func(i int) []byte {
			return note("b", []string{"noted", "thanks", "ok"}[i%3])
		})
	}},
	{"bad Idempotency-Key", nil, func(t *testing.T, rr *rateRoom) {
		rr.flood(t, 4, http.StatusUnprocessableEntity, "invalid", func(i int) []byte {
			return note("b", fmt.Sprintf("fact keyed %d", i))
		}, "Idempotency-Key", strings.Repeat("k", 200))
	}},
	{"re of nothing", nil, func(t *testing.T, rr *rateRoom) {
		rr.flood(t, 4, http.StatusUnprocessableEntity, "invalid", func(i int) []byte {
			return fmt.Appendf(nil, "v1 answer flood to b re %d n=1\nfact answered %d\n", 500+i, i)
		})
	}},
	{"a replay is answered over the cap", nil, func(t *testing.T, rr *rateRoom) {
		first := rr.post(t, "a", note("b", "fact keyed once"), "Idempotency-Key", "k-1")
		want(t, first, http.StatusCreated, "", "")
		var orig struct{ Seq int64 }
		if err := first.JSON(&orig); err != nil || orig.Seq == 0 {
			t.Fatalf("first post: %s", first)
		}
		rr.flood(t, 3, http.StatusUnprocessableEntity, "invalid", func(i int) []byte { return []byte("not a message") })
		// The retry of k-1 gets its original answer, even with the cap reached, and
		// takes nothing: the next post of a is still over the cap and no more.
		for range 3 {
			r := rr.post(t, "a", note("b", "fact keyed once"), "Idempotency-Key", "k-1")
			var got struct{ Seq int64 }
			if r.Status != http.StatusOK || r.JSON(&got) != nil || got.Seq != orig.Seq {
				t.Fatalf("replay over the cap: %s, want 200 with seq %d", r, orig.Seq)
			}
		}
		want429(t, rr.post(t, "a", note("b", "fact new"), "Idempotency-Key", "k-2"), "seat a may post 1 messages a minute (burst 4)")
		if n := rr.stored(t); n != 1 {
			t.Errorf("%d messages stored, want 1", n)
		}
	}},
	{"one seat's flood leaves the others alone", nil, func(t *testing.T, rr *rateRoom) {
		rr.flood(t, 4, http.StatusUnprocessableEntity, "invalid", func(i int) []byte { return []byte("not a message") })
		for i := range 4 {
			want(t, rr.post(t, "b", note("a", fmt.Sprintf("fact b carries on %d", i))), http.StatusCreated, "", "")
		}
	}},
	{"refusals leave the room's allowance", map[string]any{
		"seat_burst": 8, "room_messages_per_minute": 1, "room_burst": 3,
	}, func(t *testing.T, rr *rateRoom) {
		// a spends its whole burst on refusals; the room's three posts are still there for
		// the seats that have something to say.
		for range 8 {
			want(t, rr.post(t, "a", []byte("not a message")), http.StatusUnprocessableEntity, "invalid", "")
		}
		want429(t, rr.post(t, "a", []byte("not a message")), "seat a may post 1 messages a minute (burst 8)")
		for _, s := range []string{"b", "c", "d"} {
			want(t, rr.post(t, s, note("a", "fact from "+s)), http.StatusCreated, "", "")
		}
		want429(t, rr.post(t, "e", note("a", "fact from e")), "takes 1 messages a minute (burst 3)")
	}},
	{"refusals cost no tokens", map[string]any{"seat_burst": 10, "seat_tokens_per_minute": 400}, func(t *testing.T, rr *rateRoom) {
		lines := make([]string, 10)
		for i := range lines {
			lines[i] = fmt.Sprintf("fact item %d: alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa", i)
		}
		ok := note("b", lines...)
		// The same lines with a count that does not match: parsed and tokenized, refused.
		bad := []byte(strings.Replace(string(ok), "n=10", "n=11", 1))
		for range 5 {
			want(t, rr.post(t, "a", bad), http.StatusUnprocessableEntity, "invalid", "")
		}
		r := rr.post(t, "a", ok)
		want(t, r, http.StatusCreated, "", "")
		var res struct{ Tokens int }
		if r.JSON(&res) != nil || res.Tokens < 201 || res.Tokens > 400 {
			t.Fatalf("the body is %d tokens; the case wants more than half the minute's 400: %s", res.Tokens, r)
		}
		// The stored post did take its tokens: a second one is over the token cap.
		want429(t, rr.post(t, "a", []byte(strings.Replace(string(ok), "item", "entry", -1))), "seat a may post 400 tokens a minute")
	}},
	{"a 429 does not lengthen the wait", map[string]any{"seat_messages_per_minute": 60, "seat_burst": 2}, func(t *testing.T, rr *rateRoom) {
		// One message a second. Hammering while refused must not push the next one back.
		// The bucket starts full (2); its first take happens between sent and answered, so it
		// holds a token again at most a second after answered, and none before a second after
		// sent. The hammering stops half a second after sent, leaving half a second for a slow
		// request to reach its take; the last post waits until just over a second after
		// answered. Were a refusal to restart the refill, that post would still be refused.
		sent := time.Now()
		want(t, rr.post(t, "a", note("b", "fact one")), http.StatusCreated, "", "")
		answered := time.Now()
		want(t, rr.post(t, "a", note("b", "fact two")), http.StatusCreated, "", "")
		refused := 0
		for refused == 0 || time.Since(sent) < 500*time.Millisecond {
			r := rr.post(t, "a", note("b", fmt.Sprintf("fact hammer %d", refused)))
			if r.Status != http.StatusTooManyRequests {
				t.Fatalf("post %d while over the cap: %s", refused, r)
			}
			if ra := r.Header.Get("Retry-After"); ra != "1" {
				t.Fatalf("Retry-After %q after %d refusals, want 1", ra, refused)
			}
			refused++
		}
		time.Sleep(time.Until(answered.Add(1050 * time.Millisecond)))
		want(t, rr.post(t, "a", note("b", "fact three")), http.StatusCreated, "", "")
		t.Logf("%d refusals while waiting", refused)
	}},
}

// TestHostileRates runs the flood cases on SQLite and on PostgreSQL.
func TestHostileRates(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { rateSuite(t, servertest.InProcess(t, servertest.InProcessOptions{})) })
	t.Run("postgres", func(t *testing.T) {
		rateSuite(t, servertest.InProcess(t, servertest.InProcessOptions{PostgresDSN: pgtest.DSN(t)}))
	})
}

func rateSuite(t *testing.T, srv *servertest.Server) {
	for i, tc := range rateCases {
		t.Run(tc.name, func(t *testing.T) {
			rr := &rateRoom{srv: srv, name: fmt.Sprintf("rates%d", i), tok: map[string]string{}}
			srv.CreateRoom(t, rr.name, ratePolicy(tc.policy))
			for _, s := range []string{"a", "b", "c", "d", "e"} {
				rr.tok[s] = srv.AddSeat(t, rr.name, s, "agent")
			}
			tc.run(t, rr)
		})
	}
}

// TestRatesAcrossProcesses runs two `parley serve` processes on one PostgreSQL database, as
// behind a load balancer, and has seats post through both in turn: the seat's cap, the
// room's cap and a flood of refusals meet 429 after exactly as many posts as through one.
func TestRatesAcrossProcesses(t *testing.T) {
	dsn := pgtest.DSN(t)
	admin := servertest.NewToken()
	a := servertest.Start(t, "a", servertest.Options{DB: dsn, Admin: admin})
	b := servertest.Start(t, "b", servertest.Options{DB: dsn, Admin: admin})
	both := []*servertest.Server{a, b}
	one := []*servertest.Server{a}

	// until posts through the servers in turn, each post as the next seat of seats, until the
	// first 429, and returns how many were answered with status before it and the 429.
	until := func(t *testing.T, servers []*servertest.Server, room string, seats []string, body func(i int) []byte, status int) (int, servertest.Response) {
		t.Helper()
		for i := range 100 {
			srv := servers[i%len(servers)]
			r := srv.Call(t, "POST", "/v1/rooms/"+room+"/messages", seats[i%len(seats)], body(i))
			if r.Status == http.StatusTooManyRequests {
				return i, r
			}
			if r.Status != status {
				t.Fatalf("post %d through %s: %s, want %d", i, srv.Name, r, status)
			}
		}
		t.Fatal("100 posts and no 429")
		return 0, servertest.Response{}
	}
	room := func(t *testing.T, name string, policy map[string]any, seats int) []string {
		t.Helper()
		a.CreateRoom(t, name, policy)
		toks := make([]string, seats)
		for i := range toks {
			toks[i] = a.AddSeat(t, name, fmt.Sprintf("s%d", i), "agent")
		}
		return toks
	}
	fact := func(i int) []byte { return note("all", fmt.Sprintf("fact step %d", i)) }

	t.Run("seat cap", func(t *testing.T) {
		policy := ratePolicy(map[string]any{"seat_burst": 6})
		n1, _ := until(t, one, "seat1", room(t, "seat1", policy, 1), fact, http.StatusCreated)
		n2, r := until(t, both, "seat2", room(t, "seat2", policy, 1), fact, http.StatusCreated)
		if n1 != 6 || n2 != n1 {
			t.Errorf("the seat posted %d through one server and %d through two before its 429; want its burst, 6, both times", n1, n2)
		}
		want429(t, r, "seat s0 may post 1 messages a minute (burst 6)")
	})
	t.Run("room cap", func(t *testing.T) {
		policy := ratePolicy(map[string]any{"room_messages_per_minute": 1, "room_burst": 5})
		n1, _ := until(t, one, "room1", room(t, "room1", policy, 10), fact, http.StatusCreated)
		n2, r := until(t, both, "room2", room(t, "room2", policy, 10), fact, http.StatusCreated)
		if n1 != 5 || n2 != n1 {
			t.Errorf("the room took %d posts through one server and %d through two before its 429; want its burst, 5, both times", n1, n2)
		}
		want429(t, r, "room room2 takes 1 messages a minute (burst 5)")
	})
	t.Run("refusal flood", func(t *testing.T) {
		invalid := func(i int) []byte { return fmt.Appendf(nil, "flood %d", i) }
		n1, _ := until(t, one, "flood1", room(t, "flood1", ratePolicy(nil), 1), invalid, http.StatusUnprocessableEntity)
		seat := room(t, "flood2", ratePolicy(nil), 1)
		n2, r := until(t, both, "flood2", seat, invalid, http.StatusUnprocessableEntity)
		if n1 != 4 || n2 != n1 {
			t.Errorf("the seat had %d refusals through one server and %d through two before its 429; want its burst, 4, both times", n1, n2)
		}
		want429(t, r, "seat s0 may post 1 messages a minute (burst 4)")
		// Both processes now answer the seat 429, a valid post included.
		for _, srv := range both {
			want429(t, srv.Call(t, "POST", "/v1/rooms/flood2/messages", seat[0], fact(99)), "seat s0 may post 1 messages a minute (burst 4)")
		}
	})
}
