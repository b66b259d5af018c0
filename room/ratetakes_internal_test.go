package room

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
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
	sq, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer sq.Close()
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
