package room_test

import (
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/bpe"
	"github.com/parleyhq/parley/internal/sqlitetest"
	"github.com/parleyhq/parley/room"
)

// The post pipeline checks for a repeat after addressing and before the acknowledgement cap,
// the secret scan and the token cap. The service leaves the check to the store's append (and
// reads for a repeat early only when one of those later checks refuses), so these tests pin
// what the order means from outside: a repeat is refused as a repeat whatever else it would
// fail, its dedup stats are counted, and it keeps none of the seat's tokens.

// TestRepeatBeforeTokenCap: a repeat is a 409 whether or not its tokens would still fit, and
// the tokens it would cost stay with the seat.
func TestRepeatBeforeTokenCap(t *testing.T) {
	enc, err := bpe.Get("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	f := MustFixture(t, "")
	msg := "v1 report x to b n=1\noutcome the parser reads the header once\n"
	other := "v1 report x to b n=1\noutcome the parser reads the footer once\n"
	third := "v1 report x to b n=1\noutcome the tokenizer counts each body once\n"
	tm, to, t3 := enc.Count(msg), enc.Count(other), enc.Count(third)
	if tm != to || t3 != tm {
		t.Fatalf("the test wants bodies of equal tokens: %d, %d, %d", tm, to, t3)
	}
	// Room for exactly two of them in a minute; the clock does not move, so nothing refills.
	f.MustRoom("r", &parley.Policy{SeatTokensPerMinute: 2 * tm}, "a", "b")
	f.MustPost("r/a", msg)

	// The repeat fits the tokens left: refused by dedup all the same.
	_, err = f.Post("r/a", msg, "")
	if code(t, err) != parley.ECONFLICT || field(err, "seq") != int64(1) {
		t.Fatalf("a repeat within the token cap: %v, want ECONFLICT naming #1", err)
	}
	// It kept no tokens: the second new message of the minute still fits.
	if _, err := f.Post("r/a", other, ""); err != nil {
		t.Fatalf("the minute's second message after a refused repeat: %v (the repeat kept its tokens?)", err)
	}
	// Now no tokens are left: a repeat is still a repeat (409), not a 429 ...
	_, err = f.Post("r/a", msg, "")
	if code(t, err) != parley.ECONFLICT || field(err, "seq") != int64(1) {
		t.Fatalf("a repeat over the token cap: %v, want ECONFLICT naming #1", err)
	}
	// ... while a new message meets the cap.
	if _, err := f.Post("r/a", third, ""); code(t, err) != parley.ERATELIMIT {
		t.Fatalf("a new message over the token cap: %v, want ERATELIMIT", err)
	}

	st := must(f.Svc.Stats(t.Context(), f.Admin, "r"))(t)
	if st.DedupTokens["a"] != int64(2*tm) || st.Counters["a"]["dedup_messages"] != 2 {
		t.Errorf("dedup stats %v / %v, want 2 messages of %d tokens", st.DedupTokens, st.Counters["a"], tm)
	}
	if st.TokensPosted["a"] != int64(2*tm) || st.Messages != 2 {
		t.Errorf("posted %v in %d messages, want 2 of %d tokens", st.TokensPosted, st.Messages, tm)
	}
}

// TestRepeatBeforeTooLarge: a message stored under a generous cap and repeated after
// the cap fell below its size is a repeat (409), not too large (413).
func TestRepeatBeforeTooLarge(t *testing.T) {
	f := MustFixture(t, "")
	f.MustRoom("r", nil, "a", "b")
	msg := "v1 report x to b n=1\noutcome the parser reads the header once and the linter the lines\n"
	f.MustPost("r/a", msg)
	if _, err := f.Svc.UpdatePolicy(t.Context(), f.Admin, "r", []byte(`{"seat_tokens_per_minute": 5}`)); err != nil {
		t.Fatal(err)
	}
	_, err := f.Post("r/a", msg, "")
	if code(t, err) != parley.ECONFLICT || field(err, "seq") != int64(1) {
		t.Fatalf("a repeat larger than the new cap: %v, want ECONFLICT naming #1", err)
	}
	if _, err := f.Post("r/a", strings.Replace(msg, "once", "twice", 1), ""); code(t, err) != parley.ETOOLARGE {
		t.Fatalf("a new message larger than the cap: %v, want ETOOLARGE", err)
	}
}

// TestRepeatBeforeAckCap: the third acknowledgement in a row is refused by the cap, unless it
// repeats the seat's own, which is refused as a repeat.
func TestRepeatBeforeAckCap(t *testing.T) {
	f := MustFixture(t, "")
	f.MustRoom("r", nil, "a", "b")
	f.MustPost("r/a", "v1 note x to b n=1\nok\n")
	f.MustPost("r/b", "v1 note x to a n=1\nthanks\n")
	_, err := f.Post("r/a", "v1 note x to b n=1\nok\n", "")
	if code(t, err) != parley.ECONFLICT || field(err, "seq") != int64(1) {
		t.Fatalf("a repeated ack as the third in a row: %v, want ECONFLICT naming #1", err)
	}
	_, err = f.Post("r/a", "v1 note x to b n=1\nthanks\n", "")
	if code(t, err) != parley.EINVALID || field(err, "seq") != nil {
		t.Fatalf("a new ack as the third in a row: %v, want the acknowledgement cap's EINVALID", err)
	}
}

// countingObserver counts evidence verdicts and refusals.
type countingObserver struct {
	mu       sync.Mutex
	verdicts int
	refused  map[string]int
}

func (o *countingObserver) Lapsed(int)               {}
func (o *countingObserver) AppendTook(time.Duration) {}
func (o *countingObserver) EvidenceChecked(string) {
	o.mu.Lock()
	o.verdicts++
	o.mu.Unlock()
}
func (o *countingObserver) Refused(code string) {
	o.mu.Lock()
	o.refused[code]++
	o.mu.Unlock()
}

// TestRepeatCountsNoVerdict: the evidence of a refused repeat judges nothing that is stored,
// so the observer counts verdicts of stored messages only, and the repeat as a refusal.
func TestRepeatCountsNoVerdict(t *testing.T) {
	obs := &countingObserver{refused: map[string]int{}}
	svc, a := repeatRoom(t, room.Config{Observer: obs})
	body := []byte("v1 report x to b n=2\ndone#1 ran the suite\nev#1 run r-17\n")
	res, err := svc.Post(t.Context(), a, "r", body, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Notes) != 1 || obs.verdicts != 1 {
		t.Fatalf("first post: notes %q, %d verdicts counted, want 1 of each", res.Notes, obs.verdicts)
	}
	_, err = svc.Post(t.Context(), a, "r", body, "")
	if code(t, err) != parley.ECONFLICT {
		t.Fatalf("repeat: %v", err)
	}
	if obs.verdicts != 1 || obs.refused[parley.ECONFLICT] != 1 {
		t.Errorf("after the repeat: %d verdicts, refusals %v; want 1 verdict and one ECONFLICT", obs.verdicts, obs.refused)
	}
}

// TestRepeatRunsNoGit: commit evidence is judged by running git, so a post that cites a
// commit is read for a repeat first, and a repeat is refused before git runs again. A git on
// PATH that logs each call, then runs the real one, counts the calls.
func TestRepeatRunsNoGit(t *testing.T) {
	real, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("PARLEY_TEST_REQUIRE_ALL") == "1" {
			t.Fatal("git is not installed (PARLEY_TEST_REQUIRE_ALL=1)")
		}
		t.Skip("git is not installed")
	}
	repo := t.TempDir()
	if out, err := exec.Command(real, "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	bin, calls := t.TempDir(), filepath.Join(t.TempDir(), "calls")
	script := "#!/bin/sh\necho \"$*\" >> '" + calls + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	count := func() int {
		b, err := os.ReadFile(calls)
		if os.IsNotExist(err) {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), "\n")
	}

	svc, a := repeatRoom(t, room.Config{GitRepo: repo})
	body := []byte("v1 report x to b n=2\ndone#1 merged the parser\nev#1 commit 3f9a2c1d on main\n")
	res, err := svc.Post(t.Context(), a, "r", body, "")
	if err != nil {
		t.Fatal(err)
	}
	first := count()
	if first == 0 || len(res.Notes) == 0 {
		t.Fatalf("the first post ran git %d times and has notes %q; want git run and a verdict", first, res.Notes)
	}
	for range 3 {
		if _, err := svc.Post(t.Context(), a, "r", body, ""); code(t, err) != parley.ECONFLICT {
			t.Fatalf("a repeat: %v, want ECONFLICT", err)
		}
	}
	if n := count(); n != first {
		t.Errorf("three repeats ran git %d more times, want none", n-first)
	}
}

// repeatRoom starts a service on a new SQLite file with cfg (its admin token, clock, random
// source and logger filled in) and room r with seats a and b, and returns a's caller.
func repeatRoom(t *testing.T, cfg room.Config) (*room.Service, *parley.Caller) {
	t.Helper()
	st := sqlitetest.Open(t)
	clock := &Clock{t: time.Date(2026, 9, 17, 9, 0, 5, 0, time.UTC)}
	cfg.AdminToken, cfg.Now = adminToken, clock.Now
	cfg.Random, cfg.Logger = rand.NewChaCha8([32]byte{2}), slog.New(slog.DiscardHandler)
	svc, err := room.New(st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	admin := must(svc.Authenticate(t.Context(), adminToken))(t)
	must(svc.CreateRoom(t.Context(), admin, "r", nil))(t)
	if _, _, err := svc.AddSeat(t.Context(), admin, "r", "b", parley.RoleAgent); err != nil {
		t.Fatal(err)
	}
	_, tok, err := svc.AddSeat(t.Context(), admin, "r", "a", parley.RoleAgent)
	if err != nil {
		t.Fatal(err)
	}
	return svc, must(svc.Authenticate(t.Context(), tok))(t)
}
