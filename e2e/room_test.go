package e2e_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/internal/pgtest"
	"github.com/parleyhq/parley/internal/servertest"
)

// TestSQLite runs the room suite against one server on a SQLite file, then restarts it on
// the same file: the admin token printed at the first start must still work, and nothing is
// printed again.
func TestSQLite(t *testing.T) {
	parley(t)
	repo, sha := gitRepo(t)
	db := filepath.Join(t.TempDir(), "parley.db")
	s := startServer(t, "serve", nil, "--db", "sqlite:"+db, "--git-repo", repo)
	if s.adminToken == "" {
		t.Fatalf("the first start printed no admin token:\n%s", s.stdout)
	}
	if st, err := os.Stat(db + ".admin"); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("admin hash file: %v %v", st, err)
	}
	if b, _ := os.ReadFile(db + ".admin"); bytes.Contains(b, []byte(s.adminToken)) {
		t.Fatal("the admin token itself is stored; only its hash may be")
	}
	suite(t, []*server{s}, s.adminToken, sha)
	// On SQLite, /metrics shows the store's committer: the suite's posts were committed.
	if r := s.call(t, "GET", "/metrics", "", ""); metricValue(r.body, "parley_store_committed_writes_total") < 1 {
		t.Errorf("no committer series with a write committed in /metrics:\n%s", r.body)
	}

	// A graceful stop does not wait for open event streams to end by themselves.
	stream, err := s.client(t, s.adminToken).Events(t.Context(), nil, "team", 0)
	if err != nil {
		t.Fatalf("events as admin: %v", err)
	}
	defer stream.Close()
	start := time.Now()
	s.stop(t)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("stopping with an open event stream took %s", d)
	}
	if !strings.Contains(s.stdout.String(), "parley: stopped") {
		t.Errorf("no clean stop:\n%s", s.stdout)
	}
	again := startServer(t, "serve (restart)", nil, "--db", "sqlite:"+db, "--git-repo", repo)
	if again.adminToken != "" || strings.Contains(again.stdout.String(), "admin token") {
		t.Errorf("the restart printed a new admin token:\n%s", again.stdout)
	}
	if r := again.call(t, "GET", "/v1/rooms", s.adminToken, ""); r.status != 200 || !bytes.Contains(r.body, []byte(`"team"`)) {
		t.Errorf("admin token after restart: %d %s", r.status, r.body)
	}
	if r := again.call(t, "GET", "/v1/rooms", "pk_"+strings.Repeat("x", 43), ""); r.status != 401 {
		t.Errorf("a made-up token after restart: %d", r.status)
	}
}

// metricValue is the value of series (its name and labels, as printed) in a scrape of
// /metrics, summed over its lines; 0 without one.
func metricValue(scrape []byte, series string) float64 {
	total := 0.0
	for _, l := range strings.Split(string(scrape), "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			total += f
		}
	}
	return total
}

// TestPostgres runs the suite against two servers on one PostgreSQL database, alternating
// between them, so that every guarantee (gapless seqs, repeats, idempotency keys, lapsed
// asks, live reads) is checked across processes.
func TestPostgres(t *testing.T) {
	parley(t)
	dsn := pgtest.DSN(t)
	repo, sha := gitRepo(t)
	admin := "e2e-admin-token-0123456789abcdef"
	env := []string{"PARLEY_ADMIN_TOKEN=" + admin, "PARLEY_DB=" + dsn, "PARLEY_GIT_REPO=" + repo}
	a := startServer(t, "serve A", env)
	b := startServer(t, "serve B", env)
	suite(t, []*server{a, b}, admin, sha)
	// PostgreSQL commits per room, without SQLite's one committer: no committer series.
	if r := a.call(t, "GET", "/metrics", "", ""); bytes.Contains(r.body, []byte("parley_store_commits_total")) {
		t.Errorf("committer series on PostgreSQL:\n%s", r.body)
	}
}

// cluster is the servers under test; call i goes to server i mod n.
type cluster []*server

func (c cluster) at(i int) *server { return c[i%len(c)] }

var headerLine = regexp.MustCompile(`(?m)^#(\d+) (\S+) (\S+)$`)

// seqsOf returns the seq and seat of every message header in a history text.
func seqsOf(history []byte) (seqs []int64, seats []string) {
	for _, m := range headerLine.FindAllSubmatch(history, -1) {
		n, _ := strconv.ParseInt(string(m[1]), 10, 64)
		seqs = append(seqs, n)
		seats = append(seats, string(m[2]))
	}
	return seqs, seats
}

type postAnswer struct {
	Seq      int64    `json:"seq"`
	Tokens   int      `json:"tokens"`
	Notes    []string `json:"notes"`
	Warnings []struct {
		Line    int    `json:"line"`
		Message string `json:"message"`
	} `json:"warnings"`
}

func suite(t *testing.T, servers []*server, admin, sha string) {
	c := cluster(servers)
	s0 := c.at(0)
	post := func(t *testing.T, i int, token, body string, header ...string) (response, postAnswer) {
		t.Helper()
		r := c.at(i).call(t, "POST", "/v1/rooms/team/messages", token, body, append([]string{"Content-Type", "text/plain"}, header...)...)
		var a postAnswer
		if r.status < 300 {
			r.json(t, &a)
		}
		return r, a
	}
	history := func(t *testing.T, i int, token string, query string) response {
		t.Helper()
		r := c.at(i).call(t, "GET", "/v1/rooms/team/history"+query, token, "")
		if r.status != 200 {
			t.Fatalf("history%s: %d %s", query, r.status, r.body)
		}
		return r
	}

	// Rooms and seats, through the CLI and over HTTP.
	if out, errOut, code := s0.cli(t, admin, "", "room", "create", "team", "--policy", `{"seat_messages_per_minute":600,"seat_burst":200}`); code != 0 || !strings.Contains(out, "created room team") {
		t.Fatalf("parley room create: %d\n%s%s", code, out, errOut)
	}
	if r := c.at(1).call(t, "POST", "/v1/rooms", admin, `{"name":"other"}`); r.status != 201 {
		t.Fatalf("create room other: %d %s", r.status, r.body)
	}
	if r := c.at(1).call(t, "POST", "/v1/rooms", admin, `{"name":"team"}`); r.status != 409 || r.errorCode(t) != "conflict" {
		t.Errorf("second room team: %d %s", r.status, r.body)
	}
	tokens := map[string]string{}
	for i, seat := range []struct{ room, name, role string }{
		{"team", "lead", "agent"}, {"team", "builder", "agent"}, {"team", "yu", "human"}, {"team", "ci", "runner"}, {"other", "stranger", "agent"},
	} {
		if seat.name == "builder" {
			out, errOut, code := c.at(i).cli(t, admin, "", "seat", "add", seat.room, seat.name)
			m := regexp.MustCompile(`token: (\S+)`).FindStringSubmatch(out)
			if code != 0 || m == nil {
				t.Fatalf("parley seat add: %d\n%s%s", code, out, errOut)
			}
			tokens[seat.name] = m[1]
			continue
		}
		r := c.at(i).call(t, "POST", "/v1/rooms/"+seat.room+"/seats", admin, fmt.Sprintf(`{"name":%q,"role":%q}`, seat.name, seat.role))
		var st struct{ Name, Role, Token string }
		if r.status != 201 {
			t.Fatalf("add seat %s: %d %s", seat.name, r.status, r.body)
		}
		r.json(t, &st)
		if st.Name != seat.name || st.Role != seat.role || st.Token == "" {
			t.Fatalf("add seat %s: %s", seat.name, r.body)
		}
		tokens[seat.name] = st.Token
	}
	lead, builder, yu, ci, stranger := tokens["lead"], tokens["builder"], tokens["yu"], tokens["ci"], tokens["stranger"]

	// p1 through the CLI: lead delegates to builder.
	dir := t.TempDir()
	p1file := filepath.Join(dir, "p1.txt")
	os.WriteFile(p1file, []byte(fixture(t, "p1/convention.txt")), 0o644)
	out, errOut, code := c.at(0).cli(t, lead, "", "post", "team", p1file)
	m := regexp.MustCompile(`posted #(\d+) \((\d+) tokens\)`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("parley post p1: %d\n%s%s", code, out, errOut)
	}
	p1seq, _ := strconv.ParseInt(m[1], 10, 64)

	// p2 as the study published it says n=10 over 9 fact lines: refused, with a diagnostic
	// that names n, over HTTP and through the CLI.
	published := fixture(t, "p2/as-published.txt")
	r, _ := post(t, 1, builder, published)
	if r.status != 422 || r.errorCode(t) != "invalid" {
		t.Fatalf("p2 as published: %d %s", r.status, r.body)
	}
	var refused struct {
		Diagnostics []struct {
			Line, Col     int
			Code, Message string
		}
	}
	r.json(t, &refused)
	namesN := false
	for _, d := range refused.Diagnostics {
		if d.Line == 1 && strings.Contains(d.Message, "n=10") {
			namesN = true
		}
	}
	if !namesN {
		t.Errorf("p2 as published: no line-1 diagnostic naming n=10: %s", r.body)
	}
	pubFile := filepath.Join(dir, "as-published.txt")
	os.WriteFile(pubFile, []byte(published), 0o644)
	out, errOut, code = c.at(1).cli(t, builder, "", "post", "team", pubFile)
	if code != 1 || !regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(pubFile)+`:1:\d+: .*n=10`).MatchString(errOut) {
		t.Errorf("parley post of p2 as published: exit %d, want 1 and a compiler-style diagnostic\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	// p2 with a commit of the test repository as evidence: the server checks it.
	p2 := strings.Replace(fixture(t, "p2/convention.txt"), "ev#1 commit 3f9a2c1 on branch feat/rate-limit", "ev#1 commit "+sha[:7]+" on feat/rate-limit", 1)
	if !strings.Contains(p2, sha[:7]) {
		t.Fatal("fixture p2 no longer has the evidence line the test rewrites")
	}
	r, p2ans := post(t, 0, builder, p2)
	if r.status != 201 {
		t.Fatalf("p2: %d %s", r.status, r.body)
	}
	if !strings.Contains(strings.Join(p2ans.Notes, "\n"), "verified") {
		t.Errorf("p2's notes do not say its commit evidence was verified: %v", p2ans.Notes)
	}

	// p3: builder asks yu to decide.
	r, p3ans := post(t, 1, builder, fixture(t, "p3/convention.txt"))
	if r.status != 201 {
		t.Fatalf("p3: %d %s", r.status, r.body)
	}

	// A repeat is refused with the original's seq, also on the other server.
	r, _ = post(t, 1, lead, fixture(t, "p1/convention.txt"))
	var conflict struct{ Seq int64 }
	if r.status != 409 || r.errorCode(t) != "conflict" {
		t.Fatalf("repeat of p1: %d %s", r.status, r.body)
	}
	if r.json(t, &conflict); conflict.Seq != p1seq {
		t.Errorf("repeat of p1: seq %d, want %d", conflict.Seq, p1seq)
	}

	// An Idempotency-Key replay returns the original and stores nothing.
	note := "v1 note limiter to lead n=1\neta route test lands in 2h\n"
	r, first := post(t, 0, builder, note, "Idempotency-Key", "eta-1")
	if r.status != 201 {
		t.Fatalf("note: %d %s", r.status, r.body)
	}
	lastBefore := history(t, 0, lead, "?after=0").header.Get("X-Parley-Last-Seq")
	r, replay := post(t, 1, builder, note, "Idempotency-Key", "eta-1")
	if r.status != 200 || replay.Seq != first.Seq {
		t.Errorf("replay: %d %s, want 200 with seq %d", r.status, r.body, first.Seq)
	}
	if after := history(t, 1, lead, "?after=0").header.Get("X-Parley-Last-Seq"); after != lastBefore {
		t.Errorf("the replay stored something: last seq %s, was %s", after, lastBefore)
	}

	// Every seat reads the same bytes, on every server; after=N is the exact suffix.
	full := history(t, 0, lead, "?after=0")
	other := history(t, 1, builder, "?after=0")
	if !bytes.Equal(full.body, other.body) || full.header.Get("ETag") != other.header.Get("ETag") {
		t.Fatalf("lead and builder read different history:\n%s\n---\n%s", full.body, other.body)
	}
	suffix := history(t, 1, yu, fmt.Sprintf("?after=%d", p1seq))
	if !bytes.HasSuffix(full.body, suffix.body) || !bytes.HasPrefix(suffix.body, fmt.Appendf(nil, "#%d ", p1seq+1)) {
		t.Errorf("after=%d is not the exact suffix of the history:\n%s", p1seq, suffix.body)
	}
	if r := history(t, 0, lead, "?after=0&limit=1"); !strings.Contains(r.header.Get("Cache-Control"), "immutable") || !bytes.HasPrefix(full.body, r.body) {
		t.Errorf("a full page: Cache-Control %q", r.header.Get("Cache-Control"))
	} else if nm := c.at(1).call(t, "GET", "/v1/rooms/team/history?after=0&limit=1", yu, "", "If-None-Match", r.header.Get("ETag")); nm.status != 304 {
		t.Errorf("If-None-Match on the other server: %d", nm.status)
	}
	out, errOut, code = c.at(1).cli(t, yu, "", "read", "team")
	if code != 0 || out != string(full.body) {
		t.Errorf("parley read differs from the history over HTTP: exit %d\n%s%s", code, out, errOut)
	}
	out, _, _ = c.at(0).cli(t, yu, "", "read", "team", "--after", strconv.FormatInt(p1seq, 10))
	if out != string(suffix.body) {
		t.Errorf("parley read --after %d:\n%s", p1seq, out)
	}
	if seqs, seats := seqsOf(full.body); len(seqs) == 0 || seqs[0] != 1 || seats[0] != "lead" {
		t.Errorf("history headers: %v %v", seqs, seats)
	}

	// yu owes p3's ask until yu answers with re.
	inboxHas := func(i int, seq int64) bool {
		t.Helper()
		r := c.at(i).call(t, "GET", "/v1/rooms/team/inbox", yu, "", "Accept", "application/json")
		var in struct {
			Seat       string
			Unanswered []struct {
				Seq  int64
				From string
				Line string
			}
		}
		if r.status != 200 {
			t.Fatalf("inbox: %d %s", r.status, r.body)
		}
		r.json(t, &in)
		if in.Seat != "yu" {
			t.Errorf("inbox seat %q", in.Seat)
		}
		for _, a := range in.Unanswered {
			if a.Seq == seq {
				if a.From != "builder" || !strings.Contains(a.Line, "rate-limit counters") {
					t.Errorf("inbox ask: %+v", a)
				}
				return true
			}
		}
		return false
	}
	if !inboxHas(0, p3ans.Seq) {
		t.Errorf("yu's inbox lacks p3's ask #%d", p3ans.Seq)
	}
	out, errOut, code = c.at(1).cli(t, yu, "", "inbox", "team")
	if code != 0 || !strings.Contains(out, "rate-limit counters") {
		t.Errorf("parley inbox: exit %d\n%s%s", code, out, errOut)
	}
	answer := fmt.Sprintf("v1 decide limiter to builder re %d n=1\noutcome A, with the fail-open and a logged warning\n", p3ans.Seq)
	if r, _ := post(t, 1, yu, answer); r.status != 201 {
		t.Fatalf("yu's answer: %d %s", r.status, r.body)
	}
	if inboxHas(0, p3ans.Seq) {
		t.Errorf("p3's ask is still in yu's inbox after the answer")
	}

	// A run record through the CLI, as the runner seat.
	out, errOut, code = c.at(0).cli(t, ci, "", "run", "post", "team", "--id", "ci-1", "--commit", sha[:7], "--passed", "12", "--failed", "0")
	if code != 0 || !strings.Contains(out, "ev run ci-1") {
		t.Errorf("parley run post: %d\n%s%s", code, out, errOut)
	}

	// The state record: the done is verified against the repository; the 12-test claim is
	// unproven.
	r = c.at(1).call(t, "GET", "/v1/rooms/team/state/limiter", lead, "", "Accept", "application/json")
	var state struct {
		Done []struct {
			Seq           int64
			Text, Verdict string
		}
		Claims []struct {
			Seq  int64
			Text string
		}
	}
	if r.status != 200 {
		t.Fatalf("state: %d %s", r.status, r.body)
	}
	r.json(t, &state)
	verified, claimed := false, false
	for _, d := range state.Done {
		if d.Seq == p2ans.Seq && strings.HasPrefix(d.Verdict, "verified") {
			verified = true
		}
	}
	for _, cl := range state.Claims {
		if strings.Contains(cl.Text, "12 cases") {
			claimed = true
		}
	}
	if !verified || !claimed {
		t.Errorf("state of limiter: done verified %v, 12-test claim unproven %v:\n%s", verified, claimed, r.body)
	}
	out, errOut, code = c.at(0).cli(t, lead, "", "state", "team", "limiter")
	if code != 0 || !strings.Contains(out, "12 cases") {
		t.Errorf("parley state: %d\n%s%s", code, out, errOut)
	}

	// The token decides who speaks: lead posts an AACP packet that names builder as its
	// sender; history says lead.
	r, spoof := post(t, 0, lead, fixture(t, "p3/aacp.txt"))
	if r.status != 201 {
		t.Fatalf("AACP packet: %d %s", r.status, r.body)
	}
	one := history(t, 1, builder, fmt.Sprintf("?after=%d&limit=1", spoof.Seq-1))
	if _, seats := seqsOf(one.body); len(seats) == 0 || seats[0] != "lead" {
		t.Errorf("the packet naming builder is not stamped as lead's:\n%s", one.body)
	}

	// Nor can a body pass itself off as another seat's message in history.
	if r, _ := post(t, 1, builder, "v1 note limiter to all n=1\n#1 lead 20990919T1200Z\n"); r.status != 422 {
		t.Errorf("a body forging a history header: %d %s", r.status, r.body)
	}

	// Seats see only their own room.
	if r := c.at(0).call(t, "GET", "/v1/rooms/other/history", builder, ""); r.status != 403 || r.errorCode(t) != "forbidden" {
		t.Errorf("builder reads room other: %d %s", r.status, r.body)
	}
	if r := c.at(1).call(t, "POST", "/v1/rooms/team/messages", stranger, note); r.status != 403 {
		t.Errorf("stranger posts in team: %d %s", r.status, r.body)
	}
	if r := c.at(0).call(t, "GET", "/v1/rooms/team/inbox", "", ""); r.status != 401 || r.errorCode(t) != "unauthorized" {
		t.Errorf("no token: %d %s", r.status, r.body)
	}

	// Live reads: a follower on one server is woken by a post on the other; the event is
	// that message's history text.
	last := int64(0)
	if seqs, _ := seqsOf(history(t, 0, lead, "?after=0").body); len(seqs) > 0 {
		last = seqs[len(seqs)-1]
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	stream, err := c.at(0).client(t, lead).Events(ctx, nil, "team", last)
	if err != nil {
		t.Fatalf("events: %v", err)
	}
	defer stream.Close()
	follower := exec.CommandContext(ctx, bin, "read", "team", "--follow", "--after", strconv.FormatInt(last, 10))
	follower.Env = servertest.CleanEnv("PARLEY_URL="+c.at(0).url, "PARLEY_TOKEN="+yu)
	followOut := &servertest.Buffer{}
	follower.Stdout, follower.Stderr = followOut, followOut
	if err := follower.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = follower.Process.Kill(); _ = follower.Wait() }()
	time.Sleep(300 * time.Millisecond) // let the follower connect; it resumes from --after anyway
	r, live := post(t, 1, builder, "v1 note limiter to all n=1\noutcome route test green\n")
	if r.status != 201 {
		t.Fatalf("live post: %d %s", r.status, r.body)
	}
	ev, err := stream.Next()
	if err != nil {
		t.Fatalf("the event stream ended: %v", err)
	}
	liveText := history(t, 1, lead, fmt.Sprintf("?after=%d&limit=1", live.Seq-1)).body
	if ev.Seq != live.Seq || ev.Text != string(liveText) {
		t.Errorf("event %+v, want #%d with the text %q", ev, live.Seq, liveText)
	}
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(followOut.String(), string(liveText)) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(followOut.String(), string(liveText)) {
		t.Errorf("parley read --follow did not print the new message:\n%s", followOut)
	}

	// Concurrent posts across the servers get gapless seqs.
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tok := []string{lead, yu, builder}[i%3]
			r, _ := post(t, i, tok, fmt.Sprintf("v1 note limiter to all n=1\ncost %d tokens\n", 1000+i))
			if r.status != 201 {
				t.Errorf("concurrent post %d: %d %s", i, r.status, r.body)
			}
		}()
	}
	wg.Wait()
	seqs, _ := seqsOf(history(t, 1, lead, "?after=0").body)
	for i, s := range seqs {
		if s != int64(i+1) {
			t.Fatalf("seqs are not gapless: %v", seqs)
		}
	}

	// An ask whose time passes unanswered gets its default, posted once by the server.
	due := time.Now().UTC().Add(3 * time.Second).Format("20060102T150405Z")
	r, asked := post(t, 0, builder, fmt.Sprintf("v1 request limiter to lead n=2\nask merge the limiter now?, %s\ndefault silence past the ask time→merge as is\n", due))
	if r.status != 201 {
		t.Fatalf("ask with a near time: %d %s", r.status, r.body)
	}
	var lapse []byte
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		h := history(t, 1, lead, fmt.Sprintf("?after=%d", asked.Seq)).body
		if bytes.Contains(h, []byte("merge as is")) {
			lapse = h
			break
		}
	}
	if lapse == nil {
		t.Fatalf("no default posted within 20s of the ask time %s", due)
	}
	time.Sleep(time.Second) // a second scheduler, if any, would post its copy by now
	h := history(t, 0, lead, fmt.Sprintf("?after=%d", asked.Seq)).body
	if n := bytes.Count(h, []byte("merge as is")); n != 1 {
		t.Errorf("the default was posted %d times:\n%s", n, h)
	}
	if _, seats := seqsOf(h); len(seats) == 0 || seats[0] != "room" {
		t.Errorf("the default is not posted by the server's own seat:\n%s", h)
	}

	// The server counts posts for Prometheus.
	if r := c.at(0).call(t, "GET", "/metrics", "", ""); !bytes.Contains(r.body, []byte(`parley_posts_total{status="201"}`)) {
		t.Errorf("metrics:\n%s", r.body)
	}
	// The room service reports to the same registry: across the servers, the lapse above and
	// p2's verified commit evidence are counted.
	sum := func(series string) float64 {
		total := 0.0
		for i := range c {
			total += metricValue(c.at(i).call(t, "GET", "/metrics", "", "").body, series)
		}
		return total
	}
	for _, series := range []string{"parley_asks_lapsed_total", `parley_evidence_checks_total{verdict="verified"}`} {
		if n := sum(series); n < 1 {
			t.Errorf("%s = %v across the servers, want at least 1", series, n)
		}
	}
}
