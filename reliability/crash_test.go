package reliability_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/internal/pgtest"
	"github.com/parleyhq/parley/internal/servertest"
)

// floodSeats is how many seats post at once in the crash tests.
const floodSeats = 10

// crashSeat is one seat of a flood: where it posts and what became of its posts.
type crashSeat struct {
	name  string
	token string
	srv   *servertest.Server

	acked   map[string]int64 // id → seq of every post answered 201 or 200
	pending []string         // ids of posts that got no answer: the server died under them
}

// crashBody is the message with this id; its fact line carries the id so that history can
// be checked message by message. Every body is unique, so dedup never refuses one.
func crashBody(id string) []byte {
	return fmt.Appendf(nil, "v1 note load to all n=1\nfact post %s\n", id)
}

var crashFact = regexp.MustCompile(`(?m)^fact post (\S+)$`)

func newClient() *http.Client {
	return &http.Client{
		Timeout:   20 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: floodSeats * 2},
	}
}

// post sends one message of the seat with the id as its Idempotency-Key. It returns the seq
// for a 201 or 200, and ok=false for a transport error (no answer). Any other answer fails
// the test: nothing in a flood of valid, unique messages under generous caps may be refused.
func (cs *crashSeat) post(t *testing.T, c *http.Client, srv *servertest.Server, id string) (seq int64, ok bool) {
	r, err := servertest.Do(context.Background(), c, "POST", srv.URL+"/v1/rooms/crash/messages", cs.token,
		crashBody(id), "Idempotency-Key", "key-"+id)
	if err != nil {
		return 0, false
	}
	var out struct{ Seq int64 }
	if (r.Status != http.StatusCreated && r.Status != http.StatusOK) || r.JSON(&out) != nil || out.Seq < 1 {
		t.Errorf("%s: post %s on %s: %s", cs.name, id, srv.Name, r)
		return 0, true
	}
	return out.Seq, true
}

// flood has every seat post until its server stops answering or stop is closed. A seat
// whose post got no answer keeps that post as pending and stops: a client whose server is
// gone retries later with the same key.
func flood(t *testing.T, seats []*crashSeat, stop <-chan struct{}) *sync.WaitGroup {
	c := newClient()
	var wg sync.WaitGroup
	for _, cs := range seats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := fmt.Sprintf("%s.%d", cs.name, i)
				seq, ok := cs.post(t, c, cs.srv, id)
				if !ok {
					cs.pending = append(cs.pending, id)
					return
				}
				if seq > 0 {
					cs.acked[id] = seq
				}
			}
		}()
	}
	return &wg
}

// retry posts every pending message of the seats again, with the same Idempotency-Key, on
// srv: each must now be answered, 201 if the crash lost it before commit, 200 if it had been
// stored and only the answer was lost.
func retry(t *testing.T, seats []*crashSeat, srv *servertest.Server) (created, replayed int) {
	c := newClient()
	for _, cs := range seats {
		for _, id := range cs.pending {
			r, err := servertest.Do(context.Background(), c, "POST", srv.URL+"/v1/rooms/crash/messages", cs.token,
				crashBody(id), "Idempotency-Key", "key-"+id)
			if err != nil {
				t.Fatalf("%s: retry %s on %s: %v", cs.name, id, srv.Name, err)
			}
			var out struct{ Seq int64 }
			switch {
			case r.JSON(&out) != nil || out.Seq < 1:
				t.Errorf("%s: retry %s: %s", cs.name, id, r)
			case r.Status == http.StatusCreated:
				created++
			case r.Status == http.StatusOK && r.Header.Get("Idempotent-Replayed") == "true":
				replayed++
			default:
				t.Errorf("%s: retry %s: %s", cs.name, id, r)
			}
			cs.acked[id] = out.Seq
		}
		cs.pending = nil
	}
	// A replay of an acknowledged post must give back its seq and store nothing.
	for _, cs := range seats {
		for id, seq := range cs.acked {
			if got, ok := cs.post(t, c, srv, id); !ok || got != seq {
				t.Errorf("%s: replay of %s on %s gave seq %d, want %d", cs.name, id, srv.Name, got, seq)
			}
			break // one per seat is enough
		}
	}
	return created, replayed
}

// checkHistory reads the whole history and checks it against what the clients were told:
// seqs gapless from 1, every acknowledged message present once at the seq it was given,
// under its own seat, and nothing else.
func checkHistory(t *testing.T, srv *servertest.Server, seats []*crashSeat) int {
	t.Helper()
	entries, err := servertest.ParseHistory(srv.History(t, "crash", srv.Admin))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	seatOf := map[string]string{}
	for _, cs := range seats {
		for id, seq := range cs.acked {
			want[id] = seq
			seatOf[id] = cs.name
		}
	}
	seen := map[string]int64{}
	for i, e := range entries {
		if e.Seq != int64(i+1) {
			t.Fatalf("history entry %d has seq %d: seqs are not gapless from 1", i, e.Seq)
		}
		m := crashFact.FindStringSubmatch(e.Body)
		if m == nil {
			t.Errorf("#%d: not a flood message: %q", e.Seq, e.Body)
			continue
		}
		id := m[1]
		if prev, dup := seen[id]; dup {
			t.Errorf("%s is stored twice: #%d and #%d", id, prev, e.Seq)
		}
		seen[id] = e.Seq
		if wantSeq, ok := want[id]; !ok {
			t.Errorf("#%d %s was stored but no client was told so", e.Seq, id)
		} else if wantSeq != e.Seq {
			t.Errorf("%s: history has it at #%d, its client was told #%d", id, e.Seq, wantSeq)
		}
		if e.Seat != seatOf[id] {
			t.Errorf("#%d %s: seat %s, posted by %s", e.Seq, id, e.Seat, seatOf[id])
		}
	}
	for id, seq := range want {
		if _, ok := seen[id]; !ok {
			t.Errorf("%s was acknowledged as #%d and is not in history", id, seq)
		}
	}
	return len(entries)
}

// checkSearchNewest fails t unless a search for a word of every flood post finds the newest
// 100 of the n messages, newest first.
func checkSearchNewest(t *testing.T, srv *servertest.Server, n int) {
	t.Helper()
	r := srv.Call(t, "GET", "/v1/rooms/crash/search?q=post&limit=100", srv.Admin, nil)
	var out struct{ Results []struct{ Seq int64 } }
	if r.Status != http.StatusOK || r.JSON(&out) != nil {
		t.Fatalf("search after the restart: %s", r)
	}
	want := min(n, 100)
	if len(out.Results) != want {
		t.Fatalf("search after the restart found %d messages, want %d: %s", len(out.Results), want, r)
	}
	for i, res := range out.Results {
		if res.Seq != int64(n-i) {
			t.Fatalf("search after the restart: result %d is #%d, want #%d (the newest first)", i, res.Seq, n-i)
		}
	}
}

// setUpCrashRoom creates room crash with generous caps and floodSeats seats on srv.
func setUpCrashRoom(t *testing.T, srv *servertest.Server) []*crashSeat {
	srv.CreateRoom(t, "crash", servertest.Generous())
	seats := make([]*crashSeat, floodSeats)
	for i := range seats {
		name := fmt.Sprintf("s%02d", i)
		seats[i] = &crashSeat{name: name, token: srv.AddSeat(t, "crash", name, "agent"), srv: srv, acked: map[string]int64{}}
	}
	return seats
}

func pendingCount(seats []*crashSeat) int {
	n := 0
	for _, cs := range seats {
		n += len(cs.pending)
	}
	return n
}

func ackedCount(seats []*crashSeat) int {
	n := 0
	for _, cs := range seats {
		n += len(cs.acked)
	}
	return n
}

// TestCrashSQLite floods the binary on SQLite, kills it with SIGKILL, restarts it on the same
// file, retries what got no answer, and checks history against every acknowledgement.
func TestCrashSQLite(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "crash.db")
	admin := servertest.NewToken()
	first := servertest.Start(t, "first", servertest.Options{DB: db, Admin: admin})
	seats := setUpCrashRoom(t, first)

	stop := make(chan struct{})
	wg := flood(t, seats, stop)
	time.Sleep(1500 * time.Millisecond)
	first.Kill()
	wg.Wait()
	close(stop)
	if ackedCount(seats) == 0 {
		t.Fatal("no post was acknowledged before the kill: the flood did not run")
	}
	t.Logf("killed after %d acknowledged posts, %d in flight", ackedCount(seats), pendingCount(seats))

	second := servertest.Start(t, "second", servertest.Options{DB: db, Admin: admin})
	created, replayed := retry(t, seats, second)
	t.Logf("retries after restart: %d stored now, %d had been stored before the crash", created, replayed)
	n := checkHistory(t, second, seats)
	// The killed server's search index was behind (it indexes beside the committer) or in the
	// middle of a transaction: the restarted server's search still finds the newest posts,
	// every flood post holding the word, newest first as their ranks are equal.
	checkSearchNewest(t, second, n)

	// The restarted server goes on from the next seq.
	for _, cs := range seats[:1] {
		if seq, ok := cs.post(t, newClient(), second, cs.name+".after"); !ok || seq != int64(n+1) {
			t.Errorf("first post after the restart got seq %d, want %d", seq, n+1)
		}
	}
}

// TestCrashPostgres runs two servers on one PostgreSQL database, floods both, kills one, has
// its clients retry on the other with the same keys, and checks the one shared history.
func TestCrashPostgres(t *testing.T) {
	dsn := pgtest.DSN(t)
	admin := servertest.NewToken()
	a := servertest.Start(t, "a", servertest.Options{DB: dsn, Admin: admin})
	b := servertest.Start(t, "b", servertest.Options{DB: dsn, Admin: admin})
	seats := setUpCrashRoom(t, a)
	for i, cs := range seats {
		if i%2 == 1 {
			cs.srv = b
		}
	}

	stop := make(chan struct{})
	wg := flood(t, seats, stop)
	time.Sleep(1500 * time.Millisecond)
	a.Kill()
	// b's seats go on for a moment while a's clients notice, then everyone stops.
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()
	var onA []*crashSeat
	for _, cs := range seats {
		if cs.srv == a {
			onA = append(onA, cs)
		}
		if cs.srv == b && len(cs.pending) > 0 {
			t.Errorf("%s on the surviving server got no answer for %v", cs.name, cs.pending)
		}
	}
	if ackedCount(seats) == 0 {
		t.Fatal("no post was acknowledged before the kill: the flood did not run")
	}
	t.Logf("killed a after %d acknowledged posts, %d in flight on a", ackedCount(seats), pendingCount(onA))

	created, replayed := retry(t, onA, b)
	t.Logf("retries on b: %d stored now, %d had been stored by a before it died", created, replayed)
	checkHistory(t, b, seats)
}
