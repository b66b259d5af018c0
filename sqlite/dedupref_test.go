package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/sqlstore"
	"github.com/parleyhq/parley/storetest"
)

// refMsg is a stored message as the reference of TestDedupReference keeps it.
type refMsg struct {
	seq  int64
	seat string
	time int64 // µs
	hash string
}

// refDuplicate is dedup worked out by brute force over a room's messages (in seq order): the
// latest message of the seat with the hash that was posted after since (when set), or that
// is among the seat's last n messages (when n > 0), counting the seat's messages from its
// newest back.
func refDuplicate(msgs []refMsg, seat, hash string, since time.Time, n int) int64 {
	if hash == "" {
		return 0
	}
	var best int64
	count := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.seat != seat {
			continue
		}
		count++
		if m.hash != hash {
			continue
		}
		if !since.IsZero() && m.time > since.UnixMicro() || n > 0 && count <= n {
			best = max(best, m.seq)
		}
	}
	return best
}

// TestDedupReference posts random histories (two rooms, seats that post often and seldom,
// few bodies so that repeats are common, times out of order, some messages without a hash)
// to a real database file, alone and in batches the test runs itself, closing and opening
// the store now and then, and checks every dedup answer, Duplicate's and Append's, against
// refDuplicate. The bounds on what dedup reads are made tiny, so that every way of answering
// runs: the memory (Sole) full, partial or unsure of what it dropped, the counts through
// the primary key and through seat_index, and (Sole) a seat's messages found partly in
// seat_index and partly in the room's tail (seatindex.go). seat_index is checked against the
// messages whenever the store closes.
func TestDedupReference(t *testing.T) {
	defer func(keep, mx, index, older, recent, near, tail int) {
		dedupKeep, dedupMax, seatIndexScan, seatOlderScan, seatRecentScan, dedupNearScan, seatIndexTail = keep, mx, index, older, recent, near, tail
	}(dedupKeep, dedupMax, seatIndexScan, seatOlderScan, seatRecentScan, dedupNearScan, seatIndexTail)
	dedupKeep, dedupMax, seatIndexScan, seatOlderScan, seatRecentScan, dedupNearScan, seatIndexTail = 6, 20, 60, 5, 12, 10, 9

	for _, sole := range []bool{false, true} {
		t.Run(fmt.Sprintf("sole=%v", sole), func(t *testing.T) { testDedupReference(t, sole) })
	}
}

func testDedupReference(t *testing.T, sole bool) {
	path := filepath.Join(t.TempDir(), "parley.db")
	var opts []Option
	if sole {
		opts = append(opts, Sole())
	}
	open := func() *Store {
		s, err := Open(t.Context(), path, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	defer func() { s.Close() }()
	ctx := context.Background()
	rooms := []string{"r", "q"}
	for _, r := range rooms {
		storetest.MustCreateRoom(t, s, r)
	}
	ref := map[string][]refMsg{}
	rng := rand.New(rand.NewPCG(24, uint64(len(opts))))
	base := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	// a posts most, then b; c and d seldom.
	seats := []string{"a", "a", "a", "a", "a", "a", "b", "b", "b", "c", "d"}
	type post struct {
		a    *parley.Append
		hash string
	}
	pick := func() post {
		room := rooms[min(rng.IntN(5), 1)]
		seat := seats[rng.IntN(len(seats))]
		body := fmt.Sprintf("body %d", rng.IntN(12))
		var hash string
		if rng.IntN(12) > 0 {
			hash = body
		}
		m := &parley.Message{Room: room, Seat: seat, Time: base.Add(time.Duration(rng.IntN(200)-100) * time.Second),
			Format: parley.FormatText, Body: body, Hash: []byte(hash)}
		if hash == "" {
			m.Hash = nil
		}
		a := &parley.Append{Message: m, DedupLast: []int{0, 1, 2, 3, 5, 8, 13, 40}[rng.IntN(8)]}
		if rng.IntN(3) == 0 {
			a.DedupSince = base.Add(time.Duration(rng.IntN(200)-100) * time.Second)
		}
		return post{a, hash}
	}
	// check compares an append's outcome with the reference, and keeps what it stored.
	byLastN, refused := 0, 0
	check := func(what string, p post, res parley.Appended, err error) {
		t.Helper()
		m := p.a.Message
		want := refDuplicate(ref[m.Room], m.Seat, p.hash, p.a.DedupSince, p.a.DedupLast)
		if want != 0 {
			refused++
			if refDuplicate(ref[m.Room], m.Seat, p.hash, p.a.DedupSince, 0) != want {
				byLastN++ // the window alone would not find it
			}
		}
		switch {
		case want == 0 && err != nil:
			t.Fatalf("%s (%s in %s, since %v, last %d): %v; the reference finds no repeat", what, m.Seat, m.Room, p.a.DedupSince, p.a.DedupLast, err)
		case want != 0 && (parley.ErrorCode(err) != parley.ECONFLICT || seqOf(err) != want):
			t.Fatalf("%s (%s in %s, since %v, last %d): #%d, %v; the reference finds a repeat of #%d", what, m.Seat, m.Room, p.a.DedupSince, p.a.DedupLast, res.Seq, err, want)
		case want == 0:
			if n := int64(len(ref[m.Room])) + 1; res.Seq != n {
				t.Fatalf("%s stored as #%d, want #%d", what, res.Seq, n)
			}
			ref[m.Room] = append(ref[m.Room], refMsg{res.Seq, m.Seat, m.Time.UnixMicro(), p.hash})
		}
	}
	for i := range 900 {
		switch {
		case i%300 == 299:
			// The memory starts empty: every seat is read from the file again.
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = open()
			checkSeatIndex(t, s, sole)
		case i%25 == 24:
			// A batch of the committer (stopped, so that the batch is exactly these, in order).
			s.stopCommitter()
			ps := make([]post, 2+rng.IntN(12))
			outs := make([]parley.Appended, len(ps))
			ops := make([]*txOp, len(ps))
			for j := range ps {
				ps[j] = pick()
				m, err := sqlstore.Prepare(ps[j].a)
				if err != nil {
					t.Fatal(err)
				}
				ops[j] = &txOp{ctx: ctx, run: s.appendOp(ps[j].a, m, "[]", &outs[j]), done: make(chan struct{})}
			}
			s.commitBatch(ops, time.Now())
			s.startCommitter()
			for j, o := range ops {
				check(fmt.Sprintf("post %d, write %d of a batch", i, j), ps[j], outs[j], o.err)
			}
			continue
		}
		p := pick()
		m := p.a.Message
		want := refDuplicate(ref[m.Room], m.Seat, p.hash, p.a.DedupSince, p.a.DedupLast)
		got, err := s.Duplicate(ctx, m.Room, m.Seat, m.Hash, p.a.DedupSince, p.a.DedupLast)
		if err != nil || got != want {
			t.Fatalf("post %d: Duplicate(%s in %s, since %v, last %d) = %d, %v; the reference says %d", i, m.Seat, m.Room, p.a.DedupSince, p.a.DedupLast, got, err, want)
		}
		res, err := s.Append(ctx, p.a)
		check(fmt.Sprintf("post %d", i), p, res, err)
	}
	checkSeatIndex(t, s, sole)
	// Each kind of answer must be common, or the test proves little.
	stored := len(ref["r"]) + len(ref["q"])
	if refused < 100 || byLastN < 30 || stored < 300 {
		t.Fatalf("%d stored, %d refused, %d of them by the last-n count alone", stored, refused, byLastN)
	}
	t.Logf("%d stored, %d refused, %d of them by the last-n count alone", stored, refused, byLastN)
}

// checkSeatIndex checks seat_index against the messages: each room's entries are exactly those
// of its messages up to its seq in seat_indexed, and its tail after that is shorter than
// seatIndexTail plus a batch (Sole), or empty (without Sole).
func checkSeatIndex(t *testing.T, s *Store, sole bool) {
	t.Helper()
	tail, longest := seatIndexAgrees(t, s.write)
	if !sole && tail != 0 || longest >= seatIndexTail+14 {
		t.Fatalf("%d messages wait for their entries, %d of them in one room (sole %v, seatIndexTail %d)", tail, longest, sole, seatIndexTail)
	}
	t.Logf("seat_index agrees with the messages; %d wait for their entries", tail)
}

// seatIndexAgrees fails t unless every entry of seat_index is a message up to its room's seq
// in seat_indexed and every such message has its entry; it returns how many messages wait for
// theirs, and the most in one room.
func seatIndexAgrees(t *testing.T, db *sql.DB) (tail, longest int) {
	t.Helper()
	var wrong, missing int
	if err := db.QueryRow(`SELECT
		(SELECT count(*) FROM seat_index AS i WHERE NOT EXISTS (SELECT 1 FROM messages AS m WHERE m.room = i.room AND m.seq = i.seq
			AND m.seat = i.seat AND coalesce(substr(m.hash, 1, 8), x'') = i.h8 AND m.seq <= coalesce((SELECT seq FROM seat_indexed WHERE room = m.room), 0))),
		(SELECT count(*) FROM messages AS m WHERE m.seq <= coalesce((SELECT seq FROM seat_indexed WHERE room = m.room), 0)
			AND NOT EXISTS (SELECT 1 FROM seat_index AS i WHERE i.room = m.room AND i.seq = m.seq)),
		(SELECT count(*) FROM messages AS m WHERE m.seq > coalesce((SELECT seq FROM seat_indexed WHERE room = m.room), 0)),
		(SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM messages AS m
			WHERE m.seq > coalesce((SELECT seq FROM seat_indexed WHERE room = m.room), 0) GROUP BY room))`).Scan(&wrong, &missing, &tail, &longest); err != nil {
		t.Fatal(err)
	}
	if wrong != 0 || missing != 0 {
		t.Fatalf("seat_index has %d entries that are no message up to its room's indexed seq, and lacks %d messages", wrong, missing)
	}
	return tail, longest
}

// roomTail returns how many of the room's messages wait for their seat_index entries.
func roomTail(tb testing.TB, s *Store, room string) int {
	tb.Helper()
	var n int
	if err := s.write.QueryRow(`SELECT count(*) FROM messages WHERE room = ?1 AND seq > `+qIndexedSeq, room).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

// WantSeatIndexExact opens the database at path and checks seat_index against its messages
// (seatIndexAgrees), for the tests outside the package (TestCrash).
func WantSeatIndexExact(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tail, _ := seatIndexAgrees(t, db)
	t.Logf("seat_index agrees with the messages; %d wait for their entries", tail)
}

// SetSeatIndexTail sets how many of a room's messages may wait for their seat_index entries
// (TestCrashSoleChild makes it small, so that the kills land on its writes too).
func SetSeatIndexTail(n int) { seatIndexTail = n }

// TestDedupQueryPlans checks that no query of dedup, nor the idempotency lookup, nor the
// writing of seat_index's entries, scans the messages or seat_index: each searches an index
// for its room (and seat) instead, and reads the room's tail (seatindex.go) by seq. It checks the plans on an
// empty database, and again on one with messages once ANALYZE has given SQLite statistics
// (which a user may run, and which change what its planner prefers).
func TestDedupQueryPlans(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkDedupPlans(t, s, "empty")
	for _, r := range []string{"r", "q"} {
		storetest.MustCreateRoom(t, s, r)
	}
	for i := range 400 {
		body := fmt.Sprintf("m%d", i)
		m := &parley.Message{Room: []string{"r", "q"}[i%2], Seat: fmt.Sprintf("s%d", i%7), Time: time.Now(),
			Format: parley.FormatText, Body: body, Hash: []byte(body)}
		if i%3 == 0 {
			m.IdempotencyKey = fmt.Sprintf("k%d", i)
		}
		storetest.MustAppend(t, s, &parley.Append{Message: m})
	}
	if _, err := s.write.Exec("ANALYZE"); err != nil {
		t.Fatal(err)
	}
	var stats int
	if err := s.write.QueryRow(`SELECT count(*) FROM sqlite_stat1 WHERE tbl = 'messages'`).Scan(&stats); err != nil || stats == 0 {
		t.Fatalf("ANALYZE left %d statistics of messages, %v", stats, err)
	}
	checkDedupPlans(t, s, "analyzed")
}

func checkDedupPlans(t *testing.T, s *Store, what string) {
	t.Helper()
	const (
		pk      = "INDEX sqlite_autoindex_messages_1 "
		seats   = "SEARCH seat_index USING PRIMARY KEY (room=? AND seat=?"
		tail    = "SEARCH messages USING INDEX sqlite_autoindex_messages_1 (room=? AND seq>?"
		byHash  = "SEARCH i USING PRIMARY KEY (room=? AND seat=? AND h8=?)"
		rowOfIt = "USING INDEX sqlite_autoindex_messages_1 (room=? AND seq=?)"
	)
	for _, tt := range []struct {
		query string
		args  []any
		want  []string // what the plan must do
	}{
		{qDupHash, []any{"r", "a", []byte("h"), 5}, []string{byHash, rowOfIt, tail}},
		{qAfterFew, []any{"r", "a", 5, 100001}, []string{seats, tail}},
		{qAfterNear, []any{"r", "a", 5, 500, 16384}, []string{pk}},
		{qAfterSeat, []any{"r", "a", 5, 500}, []string{seats, tail}},
		{qSeatCount, []any{"r", "a", 100001}, []string{seats, tail}},
		{qSeatLatest, []any{"r", "a", 2049}, []string{seats, tail, rowOfIt}},
		{qSeatOlder, []any{"r", "a", 5, 20000}, []string{seats, tail, rowOfIt}},
		{qRoomLast, []any{"r"}, []string{pk}},
		{qSeatRecent, []any{"r", "a", 5}, []string{pk}},
		{qByKey, []any{"r", "a", "k"}, []string{"INDEX messages_idempotency "}},
		{qIndexTail, []any{"r"}, []string{tail}},
	} {
		got := queryPlan(t, s, anonymous(tt.query), tt.args...)
		// No scan of a table, nor of a room's messages whole (the primary key searched by room
		// alone), nor an index SQLite makes for the query.
		bad := strings.Contains(got, "SCAN messages") || strings.Contains(got, "SCAN seat_index") ||
			strings.Contains(got, "SCAN m ") || strings.Contains(got, "SCAN i ") ||
			strings.Contains(got, "USING INDEX sqlite_autoindex_messages_1 (room=?)") || strings.Contains(got, "AUTOMATIC")
		for _, w := range tt.want {
			bad = bad || !strings.Contains(got, w)
		}
		if bad {
			t.Errorf("%s: plan of\n%s\n%s\nwant no scan and each of %q", what, tt.query, got, tt.want)
		}
	}
}
