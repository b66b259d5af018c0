package room_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/bpe"
	"github.com/parleyhq/parley/room"
)

func TestRateCaps(t *testing.T) {
	f := MustFixture(t, "")
	f.MustRoom("r", &parley.Policy{SeatMessagesPerMinute: 2, SeatBurst: 2, RoomMessagesPerMinute: 600, RoomBurst: 3}, "a", "b", "c")
	post := func(seat string, i int) error {
		_, err := f.Post("r/"+seat, fmt.Sprintf("v1 note x to all n=1\nfact %d\n", i), "")
		return err
	}
	for i := range 2 {
		if err := post("a", i); err != nil {
			t.Fatalf("post %d: %v", i, err)
		}
	}
	err := post("a", 2)
	if code(t, err) != parley.ERATELIMIT || field(err, "retry_after") != 30 {
		t.Fatalf("third post in a burst of 2 at 2/min: %v (retry_after %v), want ERATELIMIT after 30s", err, field(err, "retry_after"))
	}
	// The refused post did not use up allowance: after 30s exactly one more fits.
	f.Clock.Advance(30 * time.Second)
	if err := post("a", 3); err != nil {
		t.Fatalf("after waiting: %v", err)
	}
	if err := post("a", 4); code(t, err) != parley.ERATELIMIT {
		t.Errorf("right after: %v", err)
	}
}

func TestRoomRateCap(t *testing.T) {
	f := MustFixture(t, "")
	f.MustRoom("r", &parley.Policy{RoomMessagesPerMinute: 6, RoomBurst: 3}, "a", "b", "c", "d")
	for i, seat := range []string{"a", "b", "c"} {
		f.MustPost("r/"+seat, fmt.Sprintf("v1 note x to all n=1\nfact %d\n", i))
	}
	_, err := f.Post("r/d", "v1 note x to all n=1\nfact d\n", "")
	if code(t, err) != parley.ERATELIMIT || !strings.Contains(err.Error(), "room r takes 6 messages a minute") || field(err, "retry_after") != 10 {
		t.Errorf("room cap: %v (retry_after %v), want ERATELIMIT, retry after 10s", err, field(err, "retry_after"))
	}
	f.Clock.Advance(10 * time.Second)
	f.MustPost("r/d", "v1 note x to all n=1\nfact d\n")
}

func TestTokenCap(t *testing.T) {
	f := MustFixture(t, "")
	f.MustRoom("r", &parley.Policy{SeatTokensPerMinute: 200}, "a", "b")
	p1 := strings.ReplaceAll(readFixture(t, "p1.txt"), "to builder", "to b") // 125 tokens
	f.MustPost("r/a", p1)
	_, err := f.Post("r/a", strings.Replace(p1, "60 req/min", "61 req/min", 1), "")
	if code(t, err) != parley.ERATELIMIT || !strings.Contains(err.Error(), "200 tokens a minute") {
		t.Fatalf("second big post: %v", err)
	}
	if ra := field(err, "retry_after").(int); ra < 10 || ra > 60 {
		t.Errorf("retry_after %d, want the time to earn back about 50 tokens at 200/min", ra)
	}
	big := "v1 note x to b n=1\n" + strings.Repeat("word ", 300) + "\n"
	if _, err := f.Post("r/a", big, ""); code(t, err) != parley.ETOOLARGE {
		t.Errorf("a message over a minute's tokens: %v, want ETOOLARGE", err)
	}
}

func TestDedupWindow(t *testing.T) {
	f := MustFixture(t, "")
	f.MustRoom("r", &parley.Policy{DedupWindow: parley.Duration(time.Hour), DedupMessages: 2}, "a", "b")
	msg := "v1 report x to b n=1\noutcome partial\n"
	f.MustPost("r/a", msg)
	f.MustPost("r/a", "v1 report x to b n=1\noutcome two\n")
	f.MustPost("r/a", "v1 report x to b n=1\noutcome three\n")
	// Trailing spaces, CRLF and extra newlines do not make a message new.
	_, err := f.Post("r/a", strings.ReplaceAll(msg, "\n", "  \r\n")+"\r\n", "")
	if code(t, err) != parley.ECONFLICT || field(err, "seq") != int64(1) || !strings.Contains(err.Error(), "repeats your message #1") {
		t.Fatalf("repeat inside the window: %v", err)
	}
	// Another seat may say the same thing.
	if _, err := f.Post("r/b", strings.Replace(msg, "to b", "to b", 1), ""); err != nil {
		t.Errorf("b repeats a's words: %v", err)
	}
	// Past the window and beyond the last 2 messages, it is new again.
	f.Clock.Advance(2 * time.Hour)
	if _, err := f.Post("r/a", msg, ""); err != nil {
		t.Errorf("repeat after the horizon: %v", err)
	}
	st := must(f.Svc.Stats(t.Context(), f.Admin, "r"))(t)
	if st.DedupTokens["a"] == 0 {
		t.Errorf("dedup tokens not counted: %+v", st.DedupTokens)
	}
}

func TestSecretScan(t *testing.T) {
	f := MustFixture(t, "")
	f.MustRoom("r", &parley.Policy{Format: parley.PolicyLenient, SeatBurst: 1000}, "a", "b") // refusals count against the cap
	wrap := func(line string) string { return "v1 note creds to b n=2\nenv staging\n" + line + "\n" }
	secrets := []struct{ name, line, kind, secret string }{
		{"aws key id", "key AKIAIOSFODNN7EXAMPLE", "AWS access key id", "AKIAIOSF"},
		{"aws secret", "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "AWS secret access key", "wJalrXUt"},
		{"github", "token ghp_" + strings.Repeat("a1B2", 9), "GitHub token", "ghp_a1B2"},
		{"github pat", "token github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "GitHub token", "github_pat_11"},
		{"slack", "hook xoxb-123456789012-abcdefABCDEF", "Slack token", "xoxb-1"},
		{"openai", "key sk-proj-abcdefghijklmnopqrstuvwxyz012345", "API key (sk-…)", "sk-proj-a"},
		{"password", "db password=hunter2!", "password or key assignment", "hunter2"},
		{"bearer", "curl -H 'Authorization: Bearer abcdefghijklmnop.qrstuvwx'", "bearer token", "abcdefgh"},
		{"pem", "-----BEGIN OPENSSH PRIVATE KEY-----", "PEM private key", "BEGIN OPENSSH"},
		{"url", "dsn postgres://app:s3cretpw@db:5432/app", "URL with a password", "s3cretpw"},
		{"admin token", "use " + adminToken, "this server's admin token", adminToken},
	}
	for _, tt := range secrets {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.Post("r/a", wrap(tt.line), "")
			if code(t, err) != parley.EINVALID || !strings.Contains(err.Error(), tt.kind) || !strings.Contains(err.Error(), "line 3") {
				t.Fatalf("got %v, want EINVALID naming %q on line 3", err, tt.kind)
			}
			// The refusal never repeats the secret.
			if strings.Contains(err.Error(), tt.secret) {
				t.Errorf("the error echoes the secret: %v", err)
			}
		})
	}
	// Another seat's token is refused too.
	if _, err := f.Post("r/a", wrap("b's token "+f.Toks["r/b"]), ""); code(t, err) != parley.EINVALID || !strings.Contains(err.Error(), "parley seat token") {
		t.Errorf("seat token: %v", err)
	}
	// AACP gets told about data_ptr.
	_, err := f.Post("r/a", "REPORT|IT|return:a|p:1|aacp:1.1|to:b|secret:hunter2xyz\n", "")
	if code(t, err) != parley.EINVALID || !strings.Contains(err.Error(), "data_ptr:") {
		t.Errorf("AACP secret: %v", err)
	}
	// Talking about secrets is not posting one.
	for _, line := range []string{
		"budget 150000 tokens",
		"password: $DB_PASSWORD from the vault",
		"api_key=<your key>",
		"block needs UPSTASH_REDIS_REST_URL in test env",
		"rotate the bearer token weekly",
		"secret=none",
	} {
		if _, err := f.Post("r/a", wrap(line), ""); err != nil {
			t.Errorf("%q refused: %v", line, err)
		}
	}
}

func TestAckPingPong(t *testing.T) {
	f := MustFixture(t, "")
	f.MustRoom("r", &parley.Policy{Format: parley.PolicyLenient}, "a", "b")
	f.MustPost("r/a", "v1 report x to b n=1\noutcome merged\n")
	f.MustPost("r/b", "v1 note x to a n=1\nthanks!\n")
	f.MustPost("r/a", "v1 note x to b n=1\nok, got it b\n")
	_, err := f.Post("r/b", "v1 note x to a n=1\noutcome ack\n", "")
	if code(t, err) != parley.EINVALID || !strings.Contains(err.Error(), "acknowledgements") {
		t.Fatalf("third acknowledgement in a row: %v", err)
	}
	if _, err := f.Post("r/b", "Thanks a.\n", ""); code(t, err) != parley.EINVALID {
		t.Errorf("plain-text acknowledgement: %v", err)
	}
	// A message with content breaks the run.
	f.MustPost("r/b", "v1 report x to a n=1\noutcome deployed\n")
	f.MustPost("r/a", "v1 note x to b n=1\nthank you\n")

	// "ok" answering an open ask is an answer, not an acknowledgement.
	f.MustPost("r/b", "v1 note x to a n=1\nnoted\n")
	ask := f.MustPost("r/a", "v1 request x to b n=1\nask ship it?\n")
	f.MustPost("r/b", "v1 answer x to a n=1\nok\n") // ack #1 (no re)
	f.MustPost("r/a", "v1 note x to b n=1\ncheers\n")
	if _, err := f.Post("r/b", fmt.Sprintf("v1 answer x to a re %d n=1\nok\n", ask.Seq), ""); err != nil {
		t.Errorf("ok as the answer to an ask: %v", err)
	}
}

func TestRunEvidence(t *testing.T) {
	repo, sha := MustRepo(t)
	f := MustFixture(t, repo)
	f.MustRoom("r", nil, "builder", "lead", "ci:runner")
	ctx := t.Context()

	// Only runner (or admin) seats post runs.
	if _, err := f.Svc.PostRun(ctx, f.Seats["r/builder"], "r", "application/json", []byte(`{"id":"ci-1","passed":12,"failed":0}`), ""); code(t, err) != parley.EFORBIDDEN {
		t.Errorf("agent posts a run: %v", err)
	} else if pe := (*parley.Error)(nil); !errors.As(err, &pe) || !strings.Contains(pe.Hint, "parley run post r ") || !strings.Contains(pe.Hint, "parley seat add r ci --role runner") {
		t.Errorf("the refusal's hint does not say how a runner posts a run: %v", err)
	}
	run, err := f.Svc.PostRun(ctx, f.Seats["r/ci"], "r", "application/json", []byte(`{"id":"ci-1","commit":"`+sha+`","passed":12,"failed":0}`), "")
	if err != nil || run.Seat != "ci" || run.Passed != 12 {
		t.Fatalf("post run: %+v, %v", run, err)
	}
	if _, err := f.Svc.PostRun(ctx, f.Seats["r/ci"], "r", "", []byte(`{"passed":1,"failed":0}`), "ci-1"); code(t, err) != parley.ECONFLICT {
		t.Errorf("same run id again: %v", err)
	}
	goTest := `{"Action":"pass","Test":"TestA"}` + "\n" + `{"Action":"fail","Test":"TestB"}` + "\n"
	if run, err := f.Svc.PostRun(ctx, f.Seats["r/ci"], "r", "", []byte(goTest), "ci-2"); err != nil || run.Failed != 1 {
		t.Fatalf("go test -json run: %+v, %v", run, err)
	}

	body := "v1 report limiter to lead n=7\n" +
		"done#1 limiter lib/rate-limit.ts\n" +
		"ev#1 commit " + sha[:10] + "\n" +
		"done#2 12 unit tests passing\n" +
		"ev#2 commit " + sha[:10] + " on main\n" +
		"done#3 route test passes\n" +
		"ev#3 run ci-1\n" +
		"done docs updated\n"
	res := f.MustPost("r/builder", body)
	want := []string{
		"! ev#1 verified: commit " + sha[:10],
		"! ev#2 unverified: commit " + sha[:10] + " is not on main",
		"! claim#2 unproven: a commit proves code exists, not that tests ran; cite run <id>",
		"! ev#3 verified: run ci-1, 12 passed",
		"! done line 8 unproven: no ev line under it",
	}
	if strings.Join(res.Notes, "\n") != strings.Join(want, "\n") {
		t.Errorf("notes:\n%s\nwant\n%s", strings.Join(res.Notes, "\n"), strings.Join(want, "\n"))
	}
	// The notes are frozen into history after the body.
	if h := f.History("r/lead", 0); !strings.HasSuffix(h, body+strings.Join(want, "\n")+"\n\n") {
		t.Errorf("history:\n%s", h)
	}

	res = f.MustPost("r/builder", "v1 report limiter to lead n=2\ndone#1 suite green\nev#1 run ci-2\n")
	if len(res.Notes) != 1 || res.Notes[0] != "! ev#1 failed: run ci-2 has 1 failure" {
		t.Errorf("failed run notes: %q", res.Notes)
	}

	st := must(f.Svc.State(ctx, f.Seats["r/lead"], "r", "limiter"))(t)
	var verified, claims []string
	for _, d := range st.Done {
		if strings.HasPrefix(d.Verdict, "verified") {
			verified = append(verified, d.Text)
		}
	}
	for _, c := range st.Claims {
		claims = append(claims, c.Text+" | "+c.Verdict)
	}
	if strings.Join(verified, ";") != "limiter lib/rate-limit.ts;route test passes" {
		t.Errorf("verified dones: %q", verified)
	}
	wantClaims := []string{
		"12 unit tests passing | unproven: a commit proves code exists, not that tests ran; cite run <id>",
		"docs updated | unproven: no ev line under it",
		"suite green | failed: run ci-2 has 1 failure",
	}
	if strings.Join(claims, "\n") != strings.Join(wantClaims, "\n") {
		t.Errorf("claims:\n%s\nwant\n%s", strings.Join(claims, "\n"), strings.Join(wantClaims, "\n"))
	}
}

func TestSchedulerLoop(t *testing.T) {
	f := MustFixture(t, "")
	f.MustRoom("r", nil, "a", "b")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	watch, err := f.Svc.Watch(ctx, f.Admin, "r")
	if err != nil {
		t.Fatal(err)
	}
	// An ask whose time is already past when the scheduler starts (as after a restart)…
	res := f.MustPost("r/a", "v1 request x to b n=1\nask pick a date, 20260917T0800Z\n")
	if len(res.Warnings) == 0 || res.Warnings[len(res.Warnings)-1].Code != "ask-past" {
		t.Errorf("no ask-past warning: %+v", res.Warnings)
	}
	<-watch
	done := make(chan struct{})
	go func() { f.Svc.RunScheduler(ctx); close(done) }()
	// …lapses at start, without any sleep in the test: Watch wakes us on the append.
	select {
	case seq := <-watch:
		if seq != 2 {
			t.Errorf("lapse seq %d, want 2", seq)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the scheduler did not lapse a past-due ask")
	}
	m, err := f.Store.Message(t.Context(), "r", 2)
	if err != nil || m.Seat != parley.SystemSeat || !strings.Contains(m.Body, "outcome no default was stated; a decides what happens next") {
		t.Errorf("lapse message: %+v, %v", m, err)
	}
	assertConvention(t, m.Body)
	cancel()
	<-done
}

func TestLapseRace(t *testing.T) {
	// Two services on one store (two server processes) lapse the same due ask at the
	// same moment: both goroutines are released together, round after round, and each
	// ask must lapse exactly once, with exactly one default posted.
	f := MustFixture(t, "")
	f.MustRoom("r", nil, "a", "b")
	other, err := room.New(f.Store, room.Config{Now: f.Clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	const rounds = 12
	for k := range rounds {
		due := time.Date(2026, 9, 17, 10, k, 0, 0, time.UTC)
		f.MustPost("r/a", fmt.Sprintf("v1 request x to b n=2\nask pick a date, %s\ndefault friday-%d\n", due.Format("20060102T1504Z"), k))
		f.Clock.Set(due.Add(time.Second))
		start := make(chan struct{})
		var wg sync.WaitGroup
		ns, errs := make([]int, 2), make([]error, 2)
		for i, svc := range []*room.Service{f.Svc, other} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				ns[i], errs[i] = svc.LapseDue(t.Context())
			}()
		}
		close(start)
		wg.Wait()
		if ns[0]+ns[1] != 1 || errs[0] != nil || errs[1] != nil {
			t.Errorf("round %d: lapses %d + %d (%v, %v), want exactly 1", k, ns[0], ns[1], errs[0], errs[1])
		}
	}
	hist := f.History("r/b", 0)
	for k := range rounds {
		if n := strings.Count(hist, fmt.Sprintf("friday-%d\n", k)); n != 2 {
			// once in the ask, once in the one default applied
			t.Errorf("ask %d: its default appears %d times in the history, want 2 (the ask and one lapse)", k, n)
		}
	}
	if n := strings.Count(hist, "default applied"); n != rounds {
		t.Errorf("%d defaults applied in the history, want %d:\n%s", n, rounds, hist)
	}
	// An answered ask never lapses.
	asked := f.MustPost("r/a", "v1 request x to b n=1\nask and a place, 20260917T1100Z\n")
	f.MustPost("r/b", fmt.Sprintf("v1 answer x to a re %d n=1\nberlin\n", asked.Seq))
	f.Clock.Set(time.Date(2026, 9, 17, 12, 0, 0, 0, time.UTC))
	if n, err := f.Svc.LapseDue(t.Context()); n != 0 || err != nil {
		t.Errorf("answered ask lapsed: %d, %v", n, err)
	}
}

func TestStatsAndCacheProjection(t *testing.T) {
	f := MustFixture(t, "")
	f.MustRoom("r", nil, "a", "b")
	for i := range 4 {
		f.MustPost("r/a", fmt.Sprintf("v1 note x to b n=1\nfact number %d\n", i))
	}
	first := f.History("r/b", 0) // nothing cached yet
	enc, err := bpe.Get("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	if st := must(f.Svc.Stats(t.Context(), f.Admin, "r"))(t); st.ReadTokens["b"] != int64(enc.Count(first)) {
		t.Errorf("read tokens %d, want the count of the text served, %d", st.ReadTokens["b"], enc.Count(first))
	}
	f.MustPost("r/a", "v1 note x to b n=1\nfact number 9\n")
	f.History("r/b", 0) // re-reads the first four messages: a cache would serve them
	f.History("r/b", 5) // a different start: uncached
	st := must(f.Svc.Stats(t.Context(), f.Seats["r/b"], "r"))(t)
	if st.Messages != 5 || st.TokensPosted["a"] == 0 {
		t.Errorf("stats: %+v", st)
	}
	cp := st.CacheProjection
	if cp.CachedTokens == 0 || cp.CachedTokens >= cp.ReadTokens || cp.ReadTokens != st.ReadTokens["b"] {
		t.Errorf("projection %+v, read %v", cp, st.ReadTokens)
	}
	if cp.CachedPriceRate != 0.1 || cp.Saving <= 0 || cp.CachedCost+cp.Saving != cp.UncachedCost {
		t.Errorf("projection arithmetic: %+v", cp)
	}
	// The cached part is exactly the first read's tokens: that is the unchanged prefix.
	if cp.CachedTokens < int64(len(first)/8) {
		t.Errorf("cached %d tokens for a %d-byte prefix", cp.CachedTokens, len(first))
	}
}

func TestLint(t *testing.T) {
	f := MustFixture(t, "")
	f.MustRoom("r", nil, "lead", "builder")
	ds, err := f.Svc.Lint(t.Context(), f.Seats["r/builder"], "r", []byte(readFixture(t, "p2-as-published.txt")))
	if err != nil || len(ds) == 0 || ds[0].Code != "n-mismatch" {
		t.Errorf("lint p2 as published: %+v, %v", ds, err)
	}
	ds, err = f.Svc.Lint(t.Context(), f.Seats["r/builder"], "r", []byte("v1 note x to lead n=1\nkey AKIAIOSFODNN7EXAMPLE\n"))
	if err != nil || len(ds) != 1 || ds[0].Code != "secret" {
		t.Errorf("lint secret: %+v, %v", ds, err)
	}
	if last, _ := f.Store.LastSeq(t.Context(), "r"); last != 0 {
		t.Errorf("lint stored a message")
	}
}

func TestRenderStateCap(t *testing.T) {
	rec := &parley.StateRecord{Topic: "big", Tokens: map[string]int{"a": 10}}
	for i := range 200 {
		rec.Claims = append(rec.Claims, parley.StateItem{Seq: int64(i + 1), Seat: "a", Text: fmt.Sprintf("claim number %d with some words", i)})
	}
	out := room.RenderState(rec)
	if len(out) > room.StateCap {
		t.Errorf("%d bytes, cap %d", len(out), room.StateCap)
	}
	if strings.Contains(out, "claim number 0 ") || !strings.Contains(out, "claim number 199 ") || !strings.Contains(out, "older lines; the history has them\ntokens a=10\n") {
		t.Errorf("the oldest must go first, with a line saying so:\n%s", out)
	}
	assertConvention(t, out)
}

func TestConcurrentPosts(t *testing.T) {
	f := MustFixture(t, "")
	f.MustRoom("r", &parley.Policy{SeatBurst: 100, RoomBurst: 100}, "a", "b", "c", "d")
	errs := make(chan error, 40)
	for _, seat := range []string{"a", "b", "c", "d"} {
		go func() {
			for i := range 10 {
				_, err := f.Post("r/"+seat, fmt.Sprintf("v1 note x to all n=1\nfact %s %d\n", seat, i), "")
				errs <- err
			}
		}()
	}
	for range 40 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	msgs, _ := f.Store.Messages(t.Context(), "r", 0, 0)
	for i, m := range msgs {
		if m.Seq != int64(i+1) {
			t.Fatalf("seq %d at position %d: not gapless", m.Seq, i)
		}
	}
	if len(msgs) != 40 {
		t.Errorf("%d messages, want 40", len(msgs))
	}
}
