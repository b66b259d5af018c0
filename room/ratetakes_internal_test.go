package room

import (
	"context"
	"fmt"
	"github.com/parleyhq/parley/internal/sqlitetest"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/sqlite"
)

// takeLog is a store whose rate buckets are in memory, as SQLite's, but shared as PostgreSQL's
// are (parley.RateStore), and which writes down every take and give-back: one line per call,
// its buckets as kind letters (s: the seat's messages, r: the room's, t: the seat's tokens).
type takeLog struct {
	*sqlite.Store
	mem memRates
	mu  sync.Mutex
	log []string
}

func bucketLetters(buckets []parley.RateBucket) string {
	var b strings.Builder
	for _, k := range buckets {
		switch {
		case k.Kind == parley.RateTokens:
			b.WriteByte('t')
		case k.Seat == "":
			b.WriteByte('r')
		default:
			b.WriteByte('s')
		}
	}
	return b.String()
}

func (l *takeLog) TakeRate(ctx context.Context, room string, now time.Time, buckets []parley.RateBucket) (parley.RateTake, error) {
	took, err := l.mem.TakeRate(ctx, room, now, buckets)
	l.mu.Lock()
	defer l.mu.Unlock()
	line := "take " + bucketLetters(buckets)
	if !took.OK {
		line += fmt.Sprintf(" short %d", took.Short)
	}
	l.log = append(l.log, line)
	return took, err
}

func (l *takeLog) GiveRate(ctx context.Context, room string, now time.Time, buckets []parley.RateBucket) error {
	l.mu.Lock()
	l.log = append(l.log, "give "+bucketLetters(buckets))
	l.mu.Unlock()
	return l.mem.GiveRate(ctx, room, now, buckets)
}

func (l *takeLog) ResetRates(ctx context.Context, room string) error {
	return l.mem.ResetRates(ctx, room)
}

// calls returns the takes and gives since the last call.
func (l *takeLog) calls() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := strings.Join(l.log, ", ")
	l.log = nil
	return s
}

// TestRateTakes checks when a post takes from its buckets: a post that passes every check
// takes its message and its tokens in one take (one round trip on PostgreSQL); a post refused
// before takes its message as it is refused and gives the room's back; a seat just refused
// at admission takes it first again, before any other check, until its wait has passed.
func TestRateTakes(t *testing.T) {
	ctx := context.Background()
	sq := sqlitetest.Open(t)
	st := &takeLog{Store: sq, mem: memRates{b: map[rateKey]*memBucket{}}}
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	s, err := New(st, Config{AdminToken: "the-admin-token-of-this-test", Now: clock, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	admin, _ := s.Authenticate(ctx, "the-admin-token-of-this-test")
	p := &parley.Policy{SeatMessagesPerMinute: 1, SeatBurst: 3, SeatTokensPerMinute: 10000, RoomMessagesPerMinute: 1e6, RoomBurst: 1 << 20}
	if _, err := s.CreateRoom(ctx, admin, "r", p); err != nil {
		t.Fatal(err)
	}
	_, tok, err := s.AddSeat(ctx, admin, "r", "a", parley.RoleAgent)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := s.Authenticate(ctx, tok)
	n := 0
	post := func(body string) error {
		n++
		if body == "" {
			body = fmt.Sprintf("v1 note x to all n=1\nfact %d\n", n)
		}
		_, err := s.Post(ctx, c, "r", []byte(body), "")
		return err
	}
	st.calls()
	for _, step := range []struct {
		name, body, code, calls string
	}{
		{"a post", "", "", "take srt"},
		{"a refusal", "not a message", parley.EINVALID, "take sr, give r"},
		{"the last message", "", "", "take srt"},
		{"over the cap", "", parley.ERATELIMIT, "take srt short 0"},
		{"a refusal over the cap, seat hot", "not a message", parley.ERATELIMIT, "take sr short 0"},
		{"a post over the cap, seat hot", "", parley.ERATELIMIT, "take sr short 0"},
	} {
		err := post(step.body)
		if parley.ErrorCode(err) != step.code && (err != nil || step.code != "") {
			t.Fatalf("%s: %v, want %q", step.name, err, step.code)
		}
		if got := st.calls(); got != step.calls {
			t.Errorf("%s: %s, want %s", step.name, got, step.calls)
		}
	}
	// A minute later the seat has one message again and is no longer hot: one take.
	now = now.Add(time.Minute)
	if err := post(""); err != nil {
		t.Fatal(err)
	}
	if got := st.calls(); got != "take srt" {
		t.Errorf("a post after the wait: %s, want take srt", got)
	}
}

// TestRepeatOverCap: a repeat that another check refuses, from a seat whose message cap ran out
// on refusals (so this process has not seen it over the cap), is answered the 429 and counts
// no repeat in the room's stats, as when admission came first; under the cap it is refused as
// a repeat and counted.
func TestRepeatOverCap(t *testing.T) {
	ctx := context.Background()
	sq := sqlitetest.Open(t)
	s, err := New(sq, Config{AdminToken: "the-admin-token-of-this-test", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	admin, _ := s.Authenticate(ctx, "the-admin-token-of-this-test")
	p := &parley.Policy{SeatMessagesPerMinute: 1, SeatBurst: 3, SeatTokensPerMinute: 10000, RoomMessagesPerMinute: 1e6, RoomBurst: 1 << 20}
	if _, err := s.CreateRoom(ctx, admin, "r", p); err != nil {
		t.Fatal(err)
	}
	seat := map[string]*parley.Caller{}
	for _, name := range []string{"a", "b"} {
		_, tok, err := s.AddSeat(ctx, admin, "r", name, parley.RoleAgent)
		if err != nil {
			t.Fatal(err)
		}
		seat[name], _ = s.Authenticate(ctx, tok)
	}
	post := func(who, body string) error {
		_, err := s.Post(ctx, seat[who], "r", []byte(body), "")
		return err
	}
	const ack = "v1 note x to all n=1\nok\n"
	must := func(err error, code string) {
		t.Helper()
		if parley.ErrorCode(err) != code && (err != nil || code != "") {
			t.Fatalf("%v, want %q", err, code)
		}
	}
	dedup := func() int64 {
		t.Helper()
		st, err := s.Stats(ctx, admin, "r")
		if err != nil {
			t.Fatal(err)
		}
		return st.Counters["a"]["dedup_messages"]
	}
	// Two acknowledgements in a row: a third is refused by the acknowledgement cap, and a's
	// repeats its own #1, so it is refused as a repeat.
	must(post("a", ack), "")
	must(post("b", ack), "")
	must(post("a", ack), parley.ECONFLICT) // a: 1 message left
	if n := dedup(); n != 1 {
		t.Fatalf("a repeat under the cap counted %d repeats, want 1", n)
	}
	must(post("a", "not a message"), parley.EINVALID) // a: none left, and no 429 yet
	must(post("a", ack), parley.ERATELIMIT)
	if n := dedup(); n != 1 {
		t.Errorf("a repeat over the cap counted %d repeats, want 1 (the one under the cap)", n)
	}
}
