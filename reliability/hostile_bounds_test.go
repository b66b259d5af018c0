package reliability_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/pgtest"
	"github.com/parleyhq/parley/internal/servertest"
	"github.com/parleyhq/parley/postgres"
	"github.com/parleyhq/parley/sqlite"
)

func init() { caseSets = append(caseSets, boundsCases) }

// emptyFields is an AACP packet of n bytes whose fields after the header are all empty: each
// one a finding, so a body of 65 KB used to earn an 8 MB refusal.
func emptyFields(n int) []byte {
	head := "REQ|DEV|return:a|p:1|aacp:1.1|to:all"
	return []byte(head + strings.Repeat("|", n-len(head)))
}

// boundsCases: requests whose answer, or whose work, would grow with what the attacker sent.
func boundsCases(env *hostileEnv) []hostile {
	post := "/v1/rooms/h/messages"
	notes := func(want string, n int) func(t *testing.T, e servertest.Entry) {
		return func(t *testing.T, e servertest.Entry) {
			if got := strings.Count(e.Body, want); got != n {
				t.Errorf("stored message has %d notes with %q, want %d:\n%s", got, want, n, servertest.Tail(e.Body, 5))
			}
		}
	}
	manyEv := "v1 report hostile to all n=1801\ndone#1 shipped\n" + strings.Repeat("ev#1 commit 3f9a2c1 on main\n", 1800)
	return []hostile{
		// Diagnostics: the refusal lists the first 20 and counts the rest.
		{name: "65 KB of empty AACP fields", method: "POST", path: post, as: "a", body: emptyFields(65000),
			status: 422, code: "invalid", phrase: "diagnostics lists the first 20 of"},
		{name: "65 KB of empty AACP fields linted", method: "POST", path: "/v1/rooms/h/lint", as: "a", body: emptyFields(65000),
			status: 200},
		{name: "3000 ev lines without their done", method: "POST", path: post, as: "a",
			body:   []byte("v1 report hostile to all n=3000\n" + strings.Repeat("ev#7 x\n", 3000)),
			status: 422, code: "invalid", phrase: "(and 2999 more errors); diagnostics lists the first 20 of 6000"},
		{name: "3000 bare done lines linted", method: "POST", path: "/v1/rooms/h/lint", as: "a",
			body: []byte("v1 report hostile to all n=3000\n" + strings.Repeat("done#1\n", 3000)), status: 200},
		// Evidence: short shas are not proof, and one message gets at most 20 checks.
		{name: "sha of four digits", method: "POST", path: post, as: "a", body: conv("done#1 shipped", "ev#1 commit 7078"),
			status: 201, stored: true, check: notes("! ev#1 unverified: commit 7078 is too short to check", 1)},
		{name: "sha of four digits on a branch", method: "POST", path: post, as: "a", body: conv("done#1 shipped it", "ev#1 commit 7078 on main"),
			status: 201, stored: true, check: notes("! ev#1 unverified: commit 7078 is too short to check", 1)},
		{name: "sha of six digits", method: "POST", path: post, as: "a", body: conv("done#1 shipped that", "ev#1 commit 3f9a2c"),
			status: 201, stored: true, check: notes("is too short to check: give at least 7 hex digits", 1)},
		{name: "1800 commit evidence lines", method: "POST", path: post, as: "a", body: []byte(manyEv),
			status: 201, stored: true, check: notes("! ev#1 unverified: too many evidence lines (the room checks at most 20 per message)", 1780)},
		// The evidence cap is a policy field, validated.
		{name: "max_evidence_checks negative", method: "PATCH", path: "/v1/rooms/h", as: "admin", body: []byte(`{"max_evidence_checks":-1}`),
			status: 422, code: "invalid", phrase: "max_evidence_checks -1 is outside 1..200"},
		{name: "max_evidence_checks huge", method: "PATCH", path: "/v1/rooms/h", as: "admin", body: []byte(`{"max_evidence_checks":100000}`),
			status: 422, code: "invalid", phrase: "max_evidence_checks 100000 is outside 1..200"},
		{name: "max_evidence_checks by a seat", method: "PATCH", path: "/v1/rooms/h", as: "a", body: []byte(`{"max_evidence_checks":200}`),
			status: 403, code: "forbidden", phrase: ""},
		// History: a page is bounded even when the reader asks for the most.
		{name: "history without limit", method: "GET", path: "/v1/rooms/h/history", as: "a", status: 200},
		{name: "history at the maximum limit", method: "GET", path: "/v1/rooms/h/history?limit=10000", as: "b", status: 200},
		{name: "history one over the maximum limit", method: "GET", path: "/v1/rooms/h/history?limit=10001", as: "a",
			status: 400, code: "invalid", phrase: "limit=10001 is over the maximum page of 10000 messages"},
	}
}

// TestBoundedRefusals measures the refusal of a 65 KB body of empty AACP fields (it was 8 MB)
// on POST and /lint, on both stores.
func TestBoundedRefusals(t *testing.T) {
	bothStores(t, func(t *testing.T, srv *servertest.Server, tok map[string]string) {
		body := emptyFields(65000)
		r := srv.Call(t, "POST", "/v1/rooms/h/messages", tok["a"], body)
		checkAnswer(t, r, 422, "invalid", "diagnostics lists the first 20 of")
		var refusal struct {
			Diagnostics []parley.Diagnostic `json:"diagnostics"`
			More        int                 `json:"more_diagnostics"`
		}
		if err := r.JSON(&refusal); err != nil || len(refusal.Diagnostics) != 20 || refusal.More < 1000 {
			t.Fatalf("refusal: %d diagnostics, %d more, %v", len(refusal.Diagnostics), refusal.More, err)
		}
		l := srv.Call(t, "POST", "/v1/rooms/h/lint", tok["a"], body)
		var lint struct {
			Diagnostics []parley.Diagnostic `json:"diagnostics"`
			More        int                 `json:"more_diagnostics"`
		}
		if err := l.JSON(&lint); err != nil || len(lint.Diagnostics) != 21 || lint.More != refusal.More {
			t.Fatalf("lint: %d diagnostics, %d more, %v", len(lint.Diagnostics), lint.More, err)
		}
		t.Logf("65 KB of empty AACP fields: refusal %d bytes, lint %d bytes (%d findings left out)", len(r.Body), len(l.Body), refusal.More)
		if len(r.Body) > 16<<10 || len(l.Body) > 16<<10 {
			t.Fatalf("refusal %d bytes, lint %d bytes; want at most 16 KiB", len(r.Body), len(l.Body))
		}
	})
}

// TestOneWordFactsAreNotAcknowledgements: red, green, rolled-back are facts, however short;
// the ack cap still refuses the third acknowledgement in a row.
func TestOneWordFactsAreNotAcknowledgements(t *testing.T) {
	bothStores(t, func(t *testing.T, srv *servertest.Server, tok map[string]string) {
		post := "/v1/rooms/h/messages"
		for i, w := range []string{"red", "green", "rolled-back", "b", "a", "shipped"} {
			seat := []string{"a", "b"}[i%2]
			if r := srv.Call(t, "POST", post, tok[seat], conv(w)); r.Status != http.StatusCreated {
				t.Fatalf("one-word fact %q: %s", w, r)
			}
		}
		for i, ack := range []string{"ok", "thanks a", "👍"} {
			r := srv.Call(t, "POST", post, tok[[]string{"a", "b"}[i%2]], conv(ack))
			if i < 2 {
				checkAnswer(t, r, 201, "", "")
				continue
			}
			checkAnswer(t, r, 422, "invalid", "were acknowledgements")
		}
	})
}

// TestAskDueAtZeroTimeLapses: 00010101T0000Z is Go's zero time, which used to mean "no time";
// it is a time long past, and the ask lapses at once with its default.
//
// It runs the real binary, whose scheduler lapses asks.
func TestAskDueAtZeroTimeLapses(t *testing.T) {
	bothBinaries(t, func(t *testing.T, srv *servertest.Server, tok map[string]string) {
		r := srv.Call(t, "POST", "/v1/rooms/h/messages", tok["a"], []byte("v1 request plan to b n=2\nask pick one by 00010101T0000Z\ndefault A\n"))
		checkAnswer(t, r, 201, "", "")
		if !strings.Contains(string(r.Body), "ask-past") {
			t.Errorf("no ask-past warning: %s", r)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			h := srv.History(t, "h", srv.Admin)
			if strings.Contains(h, "due 00010101T0000Z") && strings.Contains(h, "default applied: A") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the ask due at 00010101T0000Z did not lapse within 10s:\n%s", servertest.Tail(h, 10))
			}
			time.Sleep(50 * time.Millisecond)
		}
		in := srv.Call(t, "GET", "/v1/rooms/h/inbox", tok["b"], nil, "Accept", "application/json")
		if strings.Contains(string(in.Body), "pick one") {
			t.Errorf("the lapsed ask is still open: %s", in)
		}
	})
}

// TestStateJSONBounded: a topic of 300 long decisions gives a state record whose JSON stays
// under its cap and says how many items it left out.
func TestStateJSONBounded(t *testing.T) {
	bothStores(t, func(t *testing.T, srv *servertest.Server, tok map[string]string) {
		for i := range 300 {
			body := fmt.Sprintf("v1 decide big to all n=1\noutcome option %d %s\n", i, strings.Repeat("word ", 150))
			if r := srv.Call(t, "POST", "/v1/rooms/h/messages", tok["a"], []byte(body)); r.Status != 201 {
				t.Fatalf("post %d: %s", i, r)
			}
		}
		r := srv.Call(t, "GET", "/v1/rooms/h/state/big", tok["a"], nil, "Accept", "application/json")
		var rec parley.StateRecord
		if err := r.JSON(&rec); err != nil || rec.Dropped == 0 || len(r.Body) > 32<<10 {
			t.Fatalf("state JSON %d bytes, dropped %d, %v", len(r.Body), rec.Dropped, err)
		}
		text := srv.Call(t, "GET", "/v1/rooms/h/state/big", tok["a"], nil)
		if len(text.Body) > 4096 || !strings.Contains(string(text.Body), "dropped ") {
			t.Fatalf("state text %d bytes:\n%s", len(text.Body), text.Body)
		}
	})
}

// bothStores runs fn against an in-process server on SQLite and on PostgreSQL, with room h
// (seats a and b, a generous policy).
func bothStores(t *testing.T, fn func(t *testing.T, srv *servertest.Server, tok map[string]string)) {
	run := func(t *testing.T, dsn string) {
		srv := servertest.InProcess(t, servertest.InProcessOptions{PostgresDSN: dsn})
		srv.CreateRoom(t, "h", servertest.Generous())
		tok := map[string]string{}
		for _, s := range []string{"a", "b"} {
			tok[s] = srv.AddSeat(t, "h", s, "agent")
		}
		fn(t, srv, tok)
	}
	t.Run("sqlite", func(t *testing.T) { run(t, "") })
	t.Run("postgres", func(t *testing.T) { run(t, pgtest.DSN(t)) })
}

// bothBinaries runs fn against `parley serve` on SQLite and on PostgreSQL, with room h
// (seats a and b, a generous policy).
func bothBinaries(t *testing.T, fn func(t *testing.T, srv *servertest.Server, tok map[string]string)) {
	run := func(t *testing.T, db string) {
		srv := servertest.Start(t, "bounds", servertest.Options{DB: db})
		srv.CreateRoom(t, "h", servertest.Generous())
		tok := map[string]string{}
		for _, s := range []string{"a", "b"} {
			tok[s] = srv.AddSeat(t, "h", s, "agent")
		}
		fn(t, srv, tok)
	}
	t.Run("sqlite", func(t *testing.T) { run(t, "sqlite:"+filepath.Join(t.TempDir(), "parley.db")) })
	t.Run("postgres", func(t *testing.T) { run(t, pgtest.DSN(t)) })
}

// TestHistoryReadsBoundedMemory builds a room of 1,500 messages of 60 KB (90 MB) straight in
// the store, starts the real binary on it, and reads the history ten times at once: first ten
// unlimited reads (one page each), then ten readers that each follow every page to the end.
// The server's peak RSS (VmHWM) must stay under 300 MB; reading the whole room into memory
// per request took it to 2.9 GB.
//
//	go test ./reliability -run TestHistoryReadsBoundedMemory -count=1 -v
func TestHistoryReadsBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 90 MB room")
	}
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "big.db")
		st, err := sqlite.Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		fillBigRoom(t, st)
		st.Close()
		boundedReads(t, "sqlite:"+path)
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.DSN(t)
		st, err := postgres.Open(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		fillBigRoom(t, st)
		st.Close()
		boundedReads(t, dsn)
	})
}

const (
	bigMessages = 1500
	bigBody     = 60 << 10
)

func fillBigRoom(t *testing.T, st parley.Store) {
	t.Helper()
	p := parley.DefaultPolicy()
	p.Format, p.MaxMessageBytes = parley.PolicyLenient, 1<<20
	if err := st.CreateRoom(t.Context(), &parley.Room{Name: "big", Policy: p, CreatedAt: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	filler := strings.Repeat("lorem ipsum dolor sit amet ", bigBody/27+1)[:bigBody]
	for i := range bigMessages {
		body := fmt.Sprintf("fact %d %s", i, filler[len(strconv.Itoa(i))+6:])
		h := sha256.Sum256([]byte(body))
		if _, err := st.Append(t.Context(), &parley.Append{Message: &parley.Message{Room: "big", Seat: "w",
			Time: time.Now().UTC(), Format: parley.FormatText, Body: body, Tokens: 15000, Hash: h[:]}}); err != nil {
			t.Fatal(err)
		}
	}
}

func boundedReads(t *testing.T, db string) {
	srv := servertest.Start(t, "big", servertest.Options{DB: db})
	tok := srv.AddSeat(t, "big", "reader", "agent")
	pid := srv.PID()
	total := int64(0)
	var mu sync.Mutex
	read := func(all bool) error {
		after := int64(0)
		for {
			r, err := servertest.Do(context.Background(), http.DefaultClient, "GET",
				fmt.Sprintf("%s/v1/rooms/big/history?after=%d", srv.URL, after), tok, nil)
			if err != nil {
				return err
			}
			if r.Status != 200 || len(r.Body) > parley.HistoryPageBytes {
				return fmt.Errorf("after %d: status %d, %d bytes", after, r.Status, len(r.Body))
			}
			mu.Lock()
			total += int64(len(r.Body))
			mu.Unlock()
			next := r.Header.Get("X-Parley-Next-After")
			if !all || next == "" {
				if all && r.Header.Get("X-Parley-Last-Seq") != strconv.Itoa(bigMessages) {
					return fmt.Errorf("the last page ends at #%s", r.Header.Get("X-Parley-Last-Seq"))
				}
				return nil
			}
			after, _ = strconv.ParseInt(next, 10, 64)
		}
	}
	for _, all := range []bool{false, true} {
		total = 0
		start := time.Now()
		var wg sync.WaitGroup
		errs := make(chan error, 10)
		for range 10 {
			wg.Go(func() { errs <- read(all) })
		}
		// The server stays responsive meanwhile.
		hstart := time.Now()
		if r, err := servertest.Do(context.Background(), http.DefaultClient, "GET", srv.URL+"/healthz", "", nil); err != nil || r.Status != 200 {
			t.Errorf("healthz during the reads: %v %v", r, err)
		}
		health := time.Since(hstart)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		hwm := vmHWM(t, pid)
		what := "ten unlimited history reads at once"
		if all {
			what = "ten readers following every page at once"
		}
		t.Logf("%s: %d MB served in %v; /healthz took %v; server peak RSS %d MB", what, total>>20, time.Since(start).Round(time.Millisecond), health.Round(time.Millisecond), hwm>>20)
		if hwm > 300<<20 {
			t.Errorf("%s: peak RSS %d MB, want under 300 MB", what, hwm>>20)
		}
	}
}

// vmHWM reads a process's peak resident set size from /proc.
func vmHWM(t *testing.T, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}
