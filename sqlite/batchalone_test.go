package sqlite

import (
	"context"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/sqlstore"
	"github.com/parleyhq/parley/storetest"
)

// aloneCase is one write of TestBatchAsIfAlone: an append (what it posts, what refuses it),
// or, with stat set, a counter added to a room that may not exist.
type aloneCase struct {
	seat, body, key string
	last            int  // DedupLast
	window          bool // DedupSince an hour before the message
	asks            []int
	answers         []int64
	lapses          *parley.Ask
	stat            string // AddStat to this room instead
}

func (c aloneCase) append(room string, t0 time.Time) *parley.Append {
	h := sha256.Sum256([]byte(c.body))
	a := &parley.Append{
		Message: &parley.Message{Room: room, Seat: c.seat, Time: t0, Format: parley.FormatConvention,
			Topic: "limiter", Intent: "note", Body: c.body, Hash: h[:], IdempotencyKey: c.key},
		Answers: c.answers, DedupLast: c.last,
	}
	if c.window {
		a.DedupSince = t0.Add(-time.Hour)
	}
	for i, line := range c.asks {
		a.Asks = append(a.Asks, &parley.Ask{Line: line, From: c.seat, To: []string{"bob", "carol"}[i%2], Topic: "limiter", Text: "which?"})
	}
	if c.lapses != nil {
		cp := *c.lapses
		cp.Room = room
		a.Lapses = &cp
	}
	return a
}

// TestBatchAsIfAlone runs writes as one batch of the committer (stopped, so that the batch is
// exactly these writes, in this order) and checks that each comes out as it does when the
// same writes run one at a time in another room: replays of a key stored earlier in the
// batch, repeats of a body of the batch (window and last N), writes that fail after they
// wrote (two asks on one line, a counter for a room that does not exist), lapses (one that
// closes, one that finds the ask closed by its sibling), an answer; with the seqs gapless,
// and the rooms holding the same messages, asks and search index. A batch has no savepoint
// per write: the failures that wrote make the committer roll it back and run it again
// without them (group.go), and the others must not notice.
func TestBatchAsIfAlone(t *testing.T) {
	eachSole(t, testBatchAsIfAlone)
}

func testBatchAsIfAlone(t *testing.T, s *Store) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	first := aloneCase{seat: "alice", body: "v1 note a to all n=0", key: "k0", last: 500, window: true, asks: []int{2, 3}}
	cases := []aloneCase{
		{seat: "alice", body: "v1 note b to all n=0", key: "k1", last: 500, window: true}, // stored
		{seat: "alice", body: "v1 note c to all n=0", key: "k1", last: 500, window: true}, // replay of the one before
		{seat: "alice", body: "v1 note b to all n=0", last: 500, window: true},            // repeat of a sibling
		{seat: "bob", body: "v1 note b to all n=0", last: 500, window: true},              // another seat: stored
		{seat: "alice", body: "v1 note d to all n=0", asks: []int{2, 2}},                  // two asks on a line: wrote, fails
		{seat: "alice", body: "v1 note d to all n=0", last: 500},                          // d was never stored: stored
		{stat: "nowhere"}, // a room that does not exist: wrote, fails
		{seat: "bob", body: "v1 note lapse to all n=0", lapses: &parley.Ask{Seq: 1, Line: 2}},       // closes the ask
		{seat: "bob", body: "v1 note lapse again to all n=0", lapses: &parley.Ask{Seq: 1, Line: 2}}, // finds it closed
		{seat: "bob", body: "v1 note never asked to all n=0", lapses: &parley.Ask{Seq: 99, Line: 2}},
		{seat: "alice", body: "v1 note a to all n=0", key: "k0"},               // replay of a stored one
		{seat: "alice", body: "v1 note a to all n=0", last: 500},               // repeat of a stored one
		{seat: "alice", body: "v1 note f to all n=0", last: 500, window: true}, // stored
		{seat: "alice", body: "v1 note b to all n=0", last: 1},                 // b is not alice's last: stored
		{seat: "alice", body: "v1 note f to all n=0", last: 2},                 // f is among alice's last 2
		{seat: "bob", body: "v1 note answer to all n=0", answers: []int64{1}},  // answers line 3
		{stat: "ROOM"}, // a counter: stored
		{seat: "carol", body: "v1 note g to all n=0", key: "k9", last: 500},
		{seat: "carol", body: "v1 note g to all n=0", key: "k9", last: 500}, // a replay, not a repeat
		{seat: "alice", body: "v1 note a to all n=0", last: 3},              // stored before the batch, and 3 of hers after it
	}
	for _, room := range []string{"alone", "batch", "late"} {
		if err := s.CreateRoom(t.Context(), &parley.Room{Name: room, Policy: parley.DefaultPolicy(), CreatedAt: t0}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(t.Context(), first.append(room, t0)); err != nil {
			t.Fatal(err)
		}
	}
	room := func(c aloneCase, r string) string {
		if c.stat == "ROOM" {
			return r
		}
		return c.stat
	}

	// One at a time.
	var want []storetest.Outcome
	for _, c := range cases {
		if c.stat != "" {
			want = append(want, storetest.OutcomeOf(parley.Appended{}, s.AddStat(t.Context(), room(c, "alone"), "alice", "posts", 1)))
			continue
		}
		want = append(want, storetest.OutcomeOf(s.Append(t.Context(), c.append("alone", t0))))
	}

	// In one batch, run by the test itself with the committer stopped: in "batch" every write
	// taken at once; in "late" the first taken alone and the others late joiners, waiting at
	// the committer while it runs the first.
	for _, r := range []string{"batch", "late"} {
		outs := make([]parley.Appended, len(cases))
		ops := make([]*txOp, len(cases))
		for i, c := range cases {
			var run func(context.Context, txStmts) error
			if c.stat != "" {
				r := room(c, r)
				run = func(ctx context.Context, t txStmts) error {
					_, err := t.exec(ctx, qAddStat, r, "alice", "posts", int64(1))
					return sqlstore.StatError(r, dialect{}, err)
				}
			} else {
				a := c.append(r, t0)
				m, err := sqlstore.Prepare(a)
				if err != nil {
					t.Fatal(err)
				}
				run = s.appendOp(a, m, "[]", &outs[i])
			}
			ops[i] = &txOp{ctx: t.Context(), run: run, done: make(chan struct{})}
		}
		before := s.CommitStats()
		s.stopCommitter()
		if r == "batch" {
			s.commitBatch(ops, time.Now())
		} else {
			// Each of the others waits to hand its write to the committer, in order.
			ch := s.ops
			for _, o := range ops[1:] {
				sending := make(chan struct{})
				go func() { close(sending); ch <- o }()
				<-sending
				time.Sleep(time.Millisecond) // blocked in the send, behind the one before
			}
			s.commitBatch(ops[:1], time.Now())
			for left := true; left; {
				select {
				case o := <-ch:
					t.Errorf("late: a write was left waiting at the committer")
					close(o.done)
				default:
					left = false
				}
			}
		}
		s.startCommitter()
		if got := s.CommitStats().Since(before).Commits; got != 1 {
			t.Errorf("%s: %d commits, want 1", r, got)
		}
		for i, o := range ops {
			got := storetest.OutcomeOf(outs[i], o.err)
			if !reflect.DeepEqual(got, want[i]) {
				t.Errorf("%s: write %d (%+v): in a batch %+v, alone %+v", r, i, cases[i], got, want[i])
			}
		}
	}

	// The rooms hold the same: seqs 1..n, the same messages, asks, counters and search index
	// (once brought up to date, as a search does).
	indexBehind(t, s)
	dump := func(room string) string {
		out := storetest.RoomDump(t, s, room)
		msgs, err := s.Messages(t.Context(), room, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var posts int64
		if err := s.read.QueryRowContext(t.Context(), `SELECT value FROM stats WHERE room = ? AND seat = 'alice' AND key = 'posts'`, room).Scan(&posts); err != nil {
			t.Errorf("%s: counter: %v", room, err)
		}
		out += fmt.Sprintf("posts %d\n", posts)
		for _, word := range []string{"note", "lapse", "d"} {
			var seqs []int64
			if err := s.search.read.QueryRowContext(t.Context(), `SELECT count(*) FROM message_words WHERE message_words MATCH ? AND room = ?`, word, room).Scan(new(int)); err != nil {
				t.Fatalf("search %s: %v", word, err)
			}
			rows, err := s.search.read.QueryContext(t.Context(), `SELECT seq FROM message_words WHERE message_words MATCH ? AND room = ? ORDER BY seq`, word, room)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var seq int64
				rows.Scan(&seq)
				seqs = append(seqs, seq)
			}
			rows.Close()
			if word == "note" && len(seqs) != len(msgs) {
				t.Errorf("%s: %d messages, %d in the search index", room, len(msgs), len(seqs))
			}
			out += fmt.Sprintf("search %s %v\n", word, seqs)
		}
		return out
	}
	a := dump("alone")
	for _, r := range []string{"batch", "late"} {
		if b := dump(r); a != b {
			t.Errorf("one at a time:\n%s\nin a batch (%s):\n%s", a, r, b)
		}
	}
	// Hand-worked, so that the comparison is not between two wrong answers.
	wantSeqs := []int64{2, 2, 0, 3, 0, 4, 0, 5, 0, 0, 1, 0, 6, 7, 0, 8, 0, 9, 9, 10}
	wantCodes := map[int]string{2: parley.ECONFLICT, 4: parley.EINVALID, 6: parley.ENOTFOUND, 11: parley.ECONFLICT, 14: parley.ECONFLICT}
	for i, w := range wantSeqs {
		if want[i].Seq != w || want[i].Code != wantCodes[i] && !(cases[i].lapses != nil && w == 0) {
			t.Errorf("write %d alone: %+v, want seq %d, code %q", i, want[i], w, wantCodes[i])
		}
	}
	// After the batch the committer takes writes again, counting on from the batch's seqs.
	res, err := s.Append(t.Context(), aloneCase{seat: "dave", body: "v1 note after to all n=0"}.append("batch", t0))
	if err != nil || res.Seq != 11 {
		t.Errorf("append after the batch: #%d, %v; want #11", res.Seq, err)
	}
}

// eachSole runs f on a new store in a temporary file, opened once as any store and once Sole.
func eachSole(t *testing.T, f func(t *testing.T, s *Store)) {
	for _, sole := range []bool{false, true} {
		t.Run(fmt.Sprintf("sole=%v", sole), func(t *testing.T) {
			var opts []Option
			if sole {
				opts = append(opts, Sole())
			}
			s, err := Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"), opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.dedup.on != sole {
				t.Fatalf("opened with Sole %v, the dedup memory is on %v", sole, s.dedup.on)
			}
			f(t, s)
		})
	}
}
