package postgres

import (
	"context"
	"crypto/sha256"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/pgtest"
	"github.com/parleyhq/parley/storetest"
)

// batchCase is one append of TestBatchAsIfAlone: what it posts, and what refuses it.
type batchCase struct {
	seat, body, key string
	topic           string // "limiter" unless set
	last            int    // DedupLast
	window          bool   // DedupSince an hour before the message
	asks            []*parley.Ask
	answers         []int64
	lapses          *parley.Ask
	cancel          bool // batchOfCases cancels its context while it waits in the queue
}

func (c batchCase) append(room string, t0 time.Time) *parley.Append {
	h := sha256.Sum256([]byte(c.body))
	topic := c.topic
	if topic == "" {
		topic = "limiter"
	}
	a := &parley.Append{
		Message: &parley.Message{Room: room, Seat: c.seat, Time: t0, Format: parley.FormatConvention,
			Topic: topic, Intent: "note", Body: c.body, Hash: h[:], IdempotencyKey: c.key},
		Answers: c.answers, DedupLast: c.last,
	}
	if c.window {
		a.DedupSince = t0.Add(-time.Hour)
	}
	for _, ask := range c.asks {
		cp := *ask
		a.Asks = append(a.Asks, &cp)
	}
	if c.lapses != nil {
		cp := *c.lapses
		cp.Room = room
		a.Lapses = &cp
	}
	return a
}

// TestBatchAsIfAlone forces appends into one batch, holding the room's row lock from another
// connection while they queue, and checks that each comes out as it does when the same
// appends run one at a time in another room: replays of a key stored earlier in the batch,
// repeats of a body of the batch (window and last N), writes that fail (two asks on one
// line; a message whose text PostgreSQL refuses, which fails the batch's one INSERT of every
// message, or its one statement of dedup checks, until a row at a time finds it), lapses (one that closes, one that finds the ask closed by its sibling), an answer;
// with the seqs gapless.
func TestBatchAsIfAlone(t *testing.T) {
	s, err := Open(t.Context(), pgtest.DSN(t))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	t0 := time.Now().UTC().Truncate(time.Second)
	ask := func(line int, to string) *parley.Ask {
		return &parley.Ask{Line: line, From: "alice", To: to, Topic: "limiter", Text: "which?"}
	}
	first := batchCase{seat: "alice", body: "v1 note a to all n=0", key: "k0", last: 500, window: true,
		asks: []*parley.Ask{ask(2, "bob"), ask(3, "bob")}}
	cases := []batchCase{
		{seat: "alice", body: "v1 note b to all n=0", key: "k1", last: 500, window: true},                  // stored
		{seat: "alice", body: "v1 note c to all n=0", key: "k1", last: 500, window: true},                  // replay of the one before
		{seat: "alice", body: "v1 note b to all n=0", last: 500, window: true},                             // repeat of a sibling
		{seat: "bob", body: "v1 note b to all n=0", last: 500, window: true},                               // another seat: stored
		{seat: "alice", body: "v1 note d to all n=0", asks: []*parley.Ask{ask(2, "bob"), ask(2, "carol")}}, // two asks on a line
		{seat: "bob", body: "v1 note nul topic to all n=0", topic: "lim\x00iter"},                          // a message PostgreSQL refuses
		{seat: "bob", body: "v1 note lapse to all n=0", lapses: &parley.Ask{Seq: 1, Line: 2}},              // closes the ask
		{seat: "bob", body: "v1 note lapse again to all n=0", lapses: &parley.Ask{Seq: 1, Line: 2}},        // finds it closed
		{seat: "bob", body: "v1 note never asked to all n=0", lapses: &parley.Ask{Seq: 99, Line: 2}},
		{seat: "alice", body: "v1 note a to all n=0", key: "k0"},               // replay of a stored one
		{seat: "alice", body: "v1 note a to all n=0", last: 500},               // repeat of a stored one
		{seat: "alice", body: "v1 note f to all n=0", last: 500, window: true}, // stored
		{seat: "alice", body: "v1 note b to all n=0", last: 1},                 // b is not alice's last: stored
		{seat: "alice", body: "v1 note f to all n=0", last: 2},                 // f is among alice's last 2
		{seat: "bob", body: "v1 note answer to all n=0", answers: []int64{1}},  // answers line 3
		{seat: "carol", body: "v1 note g to all n=0", key: "k9", last: 500},
		{seat: "carol", body: "v1 note g to all n=0", key: "k9", last: 500}, // a replay, not a repeat
		{seat: "alice", body: "v1 note a to all n=0", last: 3},              // stored before the batch, and 3 of hers after it
		{seat: "bo\x00b", body: "v1 note nul seat to all n=0", last: 500},   // a dedup check PostgreSQL refuses
		{seat: "carol", body: "v1 note h to all n=0", last: 500},            // stored
	}
	for _, room := range []string{"alone", "batch", "late"} {
		if _, err := s.pool.Exec(t.Context(), `INSERT INTO rooms (name, policy, created_at) VALUES ($1, '{}', now())`, room); err != nil {
			t.Fatal(err)
		}
	}

	// One at a time.
	var want []storetest.Outcome
	if _, err := s.Append(t.Context(), first.append("alone", t0)); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		want = append(want, storetest.OutcomeOf(s.Append(t.Context(), c.append("alone", t0))))
	}

	// In one batch: the first append takes the lock's queue, and waits for the lock held
	// here; the others queue behind it. With late joiners they join its batch once it has
	// the lock; without, they go as one batch of their own once it is through.
	for _, room := range []string{"batch", "late"} {
		t.Run(room, func(t *testing.T) {
			defer func(was bool) { lateJoiners = was }(lateJoiners)
			lateJoiners = room == "late"
			got := batchOfCases(t, s, room, first.append(room, t0), cases, t0)
			for i := range cases {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Errorf("append %d (%s: %q): in a batch %+v, alone %+v", i, cases[i].seat, cases[i].body, got[i], want[i])
				}
			}
			// The rooms hold the same: seqs 1..n, the same messages and asks.
			dump := func(room string) string { return storetest.RoomDump(t, s, room) }
			if a, b := dump("alone"), dump(room); a != b {
				t.Errorf("one at a time:\n%s\nin a batch:\n%s", a, b)
			}
			// The first append and the others in one transaction with late joiners, in two
			// without (TestLateJoiners).
			var txs int
			if err := s.pool.QueryRow(t.Context(), `SELECT count(DISTINCT xmin::text) FROM messages WHERE room = $1`, room).Scan(&txs); err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int{true: 1, false: 2}[lateJoiners]; txs != want {
				t.Errorf("the messages were written by %d transactions, want %d", txs, want)
			}
		})
	}
	// Hand-worked, so that the comparison is not between two wrong answers.
	wantSeqs := []int64{2, 2, 0, 3, 0, 0, 4, 0, 0, 1, 0, 5, 6, 0, 7, 8, 8, 9, 0, 10}
	for i, w := range wantSeqs {
		if want[i].Seq != w {
			t.Errorf("append %d alone: seq %d (%+v), want %d", i, want[i].Seq, want[i], w)
		}
	}
}

// batchOfCases appends first to room while the room's row is locked here, so that it waits
// for the lock as a batch of its own, then queues each of cases behind it, one after the
// other, releases the lock, and returns the cases' outcomes.
func batchOfCases(t *testing.T, s *Store, room string, first *parley.Append, cases []batchCase, t0 time.Time) []storetest.Outcome {
	t.Helper()
	lock, err := s.pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Exec(t.Context(), `SELECT 1 FROM rooms WHERE name = $1 FOR UPDATE`, room); err != nil {
		t.Fatal(err)
	}
	queued := func() int {
		s.groups.mu.Lock()
		defer s.groups.mu.Unlock()
		if q := s.groups.queues[room]; q != nil {
			return len(q.pending)
		}
		return -1
	}
	waitQueued := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); queued() != n; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d appends queued, want %d", queued(), n)
			}
		}
	}
	firstDone := make(chan error, 1)
	go func() {
		_, err := s.Append(context.Background(), first)
		firstDone <- err
	}()
	waitQueued(0) // taken as a batch of its own, waiting for the lock
	got := make([]storetest.Outcome, len(cases))
	done := make(chan int, len(cases))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i, c := range cases {
		go func() {
			cctx := context.Background()
			if c.cancel {
				cctx = ctx
			}
			got[i] = storetest.OutcomeOf(s.Append(cctx, c.append(room, t0)))
			done <- i
		}()
		waitQueued(i + 1)
	}
	cancel()
	if err := lock.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := <-firstDone; err != nil {
		t.Fatal(err)
	}
	for range cases {
		<-done
	}
	return got
}

// TestLateJoiners: appends queued while a batch waits for the room's lock (held by another
// process's batch, here by a transaction of the test) are committed in that batch's
// transaction once it has the lock, not in one of their own after it; without late joiners
// they take a second transaction. Each row's xmin names the transaction that wrote it.
func TestLateJoiners(t *testing.T) {
	s, err := Open(t.Context(), pgtest.DSN(t))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	t0 := time.Now().UTC().Truncate(time.Second)
	for _, late := range []bool{true, false} {
		room := fmt.Sprintf("late-%v", late)
		t.Run(room, func(t *testing.T) {
			defer func(was bool) { lateJoiners = was }(lateJoiners)
			lateJoiners = late
			// A batch checked ahead of the lock waits for it with its checks done, and
			// takes no late joiners: these appends go the usual way.
			defer func(was bool) { checkAhead = was }(checkAhead)
			checkAhead = false
			if _, err := s.pool.Exec(t.Context(), `INSERT INTO rooms (name, policy, created_at) VALUES ($1, '{}', now())`, room); err != nil {
				t.Fatal(err)
			}
			first := batchCase{seat: "alice", body: "v1 note first to all n=0", key: "k0", last: 500}
			var cases []batchCase
			for i := range 13 {
				cases = append(cases, batchCase{seat: []string{"bob", "carol", "dan"}[i%3],
					body: fmt.Sprintf("v1 note late %d to all n=0", i), key: fmt.Sprintf("k%d", i+1), last: 500, window: true,
					cancel: i == 5}) // its poster gave up while it waited: it fails with its context's error
			}
			got := batchOfCases(t, s, room, first.append(room, t0), cases, t0)
			seq := int64(2)
			for i, o := range got {
				if i == 5 {
					if o.Seq != 0 || !strings.Contains(o.Message, context.Canceled.Error()) {
						t.Errorf("append %d, cancelled: %+v, want %v", i, o, context.Canceled)
					}
					continue
				}
				if o.Code != "" || o.Replay || o.Seq != seq {
					t.Errorf("append %d: %+v, want stored at seq %d", i, o, seq)
				}
				seq++
			}
			var rows, txs int
			if err := s.pool.QueryRow(t.Context(), `SELECT count(*), count(DISTINCT xmin::text) FROM messages WHERE room = $1`, room).Scan(&rows, &txs); err != nil {
				t.Fatal(err)
			}
			wantTxs := 2
			if late {
				wantTxs = 1
			}
			if rows != 13 || txs != wantTxs {
				t.Errorf("%d messages in %d transactions, want 13 in %d", rows, txs, wantTxs)
			}
		})
	}
}

// TestCheckedAhead: a batch of plain appends runs its checks before it takes the room's lock,
// and stores its messages only if no message of its seats was stored in between; here another
// store (another process) appends between the checks and the writes (aheadHook).
//   - bob's message comes in between: alice's is stored ahead all the same, at the seq after
//     bob's, with no second attempt;
//   - alice's own copy of the body comes in between: the checks no longer hold, the batch runs
//     again with its checks under the lock, and the copy refuses it.
func TestCheckedAhead(t *testing.T) {
	dsn := pgtest.DSN(t)
	s, err := Open(t.Context(), dsn)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	other, err := Open(t.Context(), dsn)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer other.Close()
	if !checkAhead {
		t.Fatal("batches are not checked ahead of the lock by default")
	}
	const room = "ahead"
	if _, err := s.pool.Exec(t.Context(), `INSERT INTO rooms (name, policy, created_at) VALUES ($1, '{}', now())`, room); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().UTC().Truncate(time.Second)
	post := func(st *Store, c batchCase) storetest.Outcome {
		return storetest.OutcomeOf(st.Append(t.Context(), c.append(room, t0)))
	}
	var hooked []storetest.Outcome
	between := func(c batchCase) {
		aheadHook = func(string) {
			aheadHook = nil // once
			hooked = append(hooked, post(other, c))
		}
	}
	defer func() { aheadHook = nil }()

	between(batchCase{seat: "bob", body: "v1 note b1 to all n=0", last: 500})
	got := post(s, batchCase{seat: "alice", body: "v1 note a1 to all n=0", last: 500})
	if len(hooked) != 1 || hooked[0].Seq != 1 || hooked[0].Code != "" {
		t.Fatalf("bob's append between the checks and the writes: %+v, want stored at seq 1", hooked)
	}
	if got.Seq != 2 || got.Code != "" {
		t.Errorf("alice's append after bob's came in: %+v, want stored at seq 2", got)
	}
	if n := s.aheadAgain.Load(); n != 0 {
		t.Errorf("%d batches ran again, want 0: another seat's message leaves the checks standing", n)
	}

	between(batchCase{seat: "alice", body: "v1 note a2 to all n=0", last: 500})
	got = post(s, batchCase{seat: "alice", body: "v1 note a2 to all n=0", last: 500})
	if len(hooked) != 2 || hooked[1].Seq != 3 {
		t.Fatalf("alice's copy between the checks and the writes: %+v, want stored at seq 3", hooked)
	}
	if got.Seq != 0 || got.Code != parley.ECONFLICT {
		t.Errorf("alice's append after her copy came in: %+v, want refused as a repeat of seq 3", got)
	}
	if fmt.Sprint(got.DupSeq) != "3" {
		t.Errorf("the refusal names seq %v (%q), want 3", got.DupSeq, got.Message)
	}
	if n := s.aheadAgain.Load(); n != 1 {
		t.Errorf("%d batches ran again, want 1", n)
	}

	// A third append, alone: seq 4, and the room's seqs gapless.
	if got := post(s, batchCase{seat: "alice", body: "v1 note a3 to all n=0", last: 500}); got.Seq != 4 {
		t.Errorf("the next append: %+v, want seq 4", got)
	}
	msgs, err := s.Messages(t.Context(), room, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range msgs {
		if m.Seq != int64(i+1) {
			t.Errorf("message %d has seq %d", i, m.Seq)
		}
	}
	if len(msgs) != 4 {
		t.Errorf("%d messages stored, want 4", len(msgs))
	}
}
