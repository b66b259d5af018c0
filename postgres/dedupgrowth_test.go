package postgres

import (
	"crypto/sha256"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/pgtest"
	"github.com/parleyhq/parley/storetest"
)

// TestDuplicateQueryPlanSmallTable: a process that starts on a room of a few hundred messages
// and then appends to it must still find each hash through the (room, seat, hash, seq)
// index. A generic plan made at that size (which forcing generic plans in the append's
// transaction produced) read the (room, topic, seq) index instead and filtered the hash over
// every message of the room, under the room's lock. The appends here repeat nothing, so with
// the right plans no dedup check reads an entry of messages_topic or of the primary key; PostgreSQL's own counts say
// how many it read.
func TestDuplicateQueryPlanSmallTable(t *testing.T) {
	dsn := pgtest.DSN(t)
	first, err := Open(t.Context(), dsn)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	storetest.MustCreateRoom(t, first, "r")
	t0 := time.Now().UTC()
	add := func(s *Store, i int) {
		body := fmt.Sprintf("v1 note message %d to all n=0", i)
		h := sha256.Sum256([]byte(body))
		a := &parley.Append{
			Message: &parley.Message{Room: "r", Seat: fmt.Sprintf("s%d", i%20), Time: t0.Add(time.Duration(i) * time.Millisecond),
				Format: parley.FormatConvention, Topic: fmt.Sprintf("t%d", i%3), Intent: "note", Body: body, Hash: h[:]},
			DedupSince: t0.Add(-time.Hour), DedupLast: 500,
		}
		if _, err := s.Append(t.Context(), a); err != nil {
			t.Errorf("append %d: %v", i, err)
		}
	}
	for i := range 250 {
		add(first, i)
	}
	first.Close()
	before := otherReads(t, dsn)

	// A new process: its connections plan the dedup checks now, on a room of 250 messages.
	second, err := Open(t.Context(), dsn)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	var wg sync.WaitGroup
	for w := range 10 {
		wg.Go(func() {
			for i := 250 + w; i < 1250; i += 10 {
				add(second, i)
			}
		})
	}
	wg.Wait()
	second.Close() // its backends end, and report their counts as they do

	read := otherReads(t, dsn) - before
	t.Logf("the second process's 1,000 appends read %d entries of messages_topic and messages_pkey", read)
	// A scan of the room per check would read about 750 entries each (the room grows from
	// 250 to 1,250), 750,000 in all. PostgreSQL's own plans, which look at the table as it
	// grows, read a few tens per append here.
	if read > 200_000 {
		t.Errorf("the appends read %d entries of messages_topic and messages_pkey: the dedup checks filtered the hash over the room instead of finding it in messages_seat_hash", read)
	}
}

// otherReads is how many index entries of messages_topic and of the primary key (room, seq)
// PostgreSQL has read so far: the indexes a dedup check could read the room through, instead
// of the seat's entries in messages_seat_hash and messages_seat_seq.
func otherReads(t *testing.T, dsn string) int64 {
	t.Helper()
	s, err := Open(t.Context(), dsn)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	var read int64
	if err := s.pool.QueryRow(t.Context(),
		`SELECT coalesce(sum(idx_tup_read), 0) FROM pg_stat_user_indexes WHERE indexrelname IN ('messages_topic', 'messages_pkey')`).Scan(&read); err != nil {
		t.Fatal(err)
	}
	return read
}
