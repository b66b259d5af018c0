package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/parleyhq/parley"
)

// searchRoom fills room with the hand-built messages testSearch ranks. Every body is ten
// words long (the header's seven and three), so that no ranking turns on length, and only
// the fact line holds a query word. The ranks, worked by hand for the words redis and window:
//
//   - PostgreSQL's ts_rank (weight 0.1 per occurrence, the i-th occurrence of a word counting
//     1/i² of it, divided by 1.6449 and then by the number of query words): both words once
//     0.0608, redis three times 0.0414, redis once 0.0304.
//   - SQLite's bm25 with the FTS5 defaults (k1 1.2, b 0.75) over the index's 12 rows (four
//     in another room), 4 holding redis and 2 window: idf(redis) = ln(8.5/4.5) = 0.636 and
//     idf(window) = ln(10.5/2.5) = 1.435; both words once 2.071, redis three times
//     0.636·3·2.2/4.2 = 0.999, redis once 0.636.
//
// So both stores rank #2 (both words), #4 (redis three times), then #6 and #3 (redis once
// each, equal, the newer first); #1, #5, #7 and #8 hold neither word.
func searchRoom(t *testing.T, s parley.Store, room string) {
	t.Helper()
	for _, line := range []string{
		"nothing here yet", // 1
		"redis window chosen",
		"redis kept here",
		"redis redis redis",
		"plain words only", // 5
		"redis kept there",
		"cache warmed twice",
		"nothing to see", // 8
	} {
		post(t, s, room, "alice", "v1 note cache to all n=1\n"+line+"\n")
	}
}

func seqsOf(msgs []*parley.Message) []int64 {
	out := make([]int64, len(msgs))
	for i, m := range msgs {
		out[i] = m.Seq
	}
	return out
}

func wantSearch(t *testing.T, s parley.Store, room string, words []string, limit int, want []int64) []*parley.Message {
	t.Helper()
	got, err := s.Search(ctx(t), room, words, limit)
	if err != nil {
		t.Fatalf("Search(%s, %q, %d): %v", room, words, limit, err)
	}
	if !slices.Equal(seqsOf(got), want) {
		t.Fatalf("Search(%s, %q, %d) = %v, want %v", room, words, limit, seqsOf(got), want)
	}
	return got
}

func testSearch(t *testing.T, s parley.Store) {
	MustCreateRoom(t, s, "other")
	// Another room's messages count in SQLite's idf (above) and are never found from this one.
	post(t, s, "other", "bob", "v1 note cache to all n=1\nredis window elsewhere\n")
	for i := range 3 {
		post(t, s, "other", "bob", fmt.Sprintf("v1 note cache to all n=1\nfiller line %d\n", i))
	}
	MustCreateRoom(t, s, "s")
	searchRoom(t, s, "s")

	got := wantSearch(t, s, "s", []string{"redis", "window"}, 10, []int64{2, 4, 6, 3})
	if got[0].Body != "v1 note cache to all n=1\nredis window chosen\n" || got[0].Seat != "alice" || got[0].Room != "s" || !got[0].Time.Equal(t0) {
		t.Errorf("the best match is %+v, want message #2 as stored", got[0])
	}
	wantSearch(t, s, "s", []string{"window"}, 10, []int64{2})
	wantSearch(t, s, "s", []string{"redis", "window"}, 2, []int64{2, 4})
	wantSearch(t, s, "s", []string{"absent"}, 10, []int64{})
	wantSearch(t, s, "other", []string{"chosen"}, 10, []int64{})
	wantSearch(t, s, "nosuch", []string{"redis"}, 10, []int64{})
	// Words are lower-case, as the indexes keep them; the header's words are indexed too.
	wantSearch(t, s, "s", []string{"twice"}, 10, []int64{7})
	wantSearch(t, s, "s", []string{"cache"}, 3, []int64{7, 8, 6}) // #7 holds it twice

	// No limit, or no word: nothing, without asking the index.
	wantSearch(t, s, "s", []string{"redis"}, 0, []int64{})
	wantSearch(t, s, "s", nil, 10, []int64{})
	// An entry that is not a plain word is dropped, never read as query syntax: FTS5's
	// quotes, stars, NEAR, column filters and minus, tsquery's operators, SQL quoting.
	hostile := []string{`"`, `*`, `redis*`, `NEAR(redis window)`, `body:redis`, `-redis`, `!redis`,
		`redis & window`, `'`, `redis' | 'x`, `OR`, `)`, `(`, `^redis`, "redis\x00"}
	wantSearch(t, s, "s", hostile, 10, []int64{})
	wantSearch(t, s, "s", append(hostile, "window"), 10, []int64{2})
	// The words of FTS5's and tsquery's syntax are plain words here.
	wantSearch(t, s, "s", []string{"or", "and", "not", "near", "redis"}, 10, []int64{4, 6, 3, 2})

	// A room imported whole (parley import) is found like one posted message by message.
	if err := s.ImportRoom(ctx(t), renamed(ArchiveOf(t, s, "s"), "copy")); err != nil {
		t.Fatalf("ImportRoom: %v", err)
	}
	wantSearch(t, s, "copy", []string{"redis", "window"}, 10, []int64{2, 4, 6, 3})
	// And what is posted after it too.
	post(t, s, "copy", "alice", "v1 note cache to all n=1\nwindow closed now\n")
	wantSearch(t, s, "copy", []string{"window"}, 10, []int64{9, 2})
}

// Backfill checks that a database made before the search index is indexed when a store opens
// it: open opens a store on the one database (closed by the caller's cleanup or by Backfill),
// and unindex takes the index away again and forgets its migration, as a database of an older
// parley has neither. One body is not UTF-8 and holds a NUL, which bytes-exact storage allows.
func Backfill(t *testing.T, open func(t *testing.T) parley.Store, unindex func(t *testing.T)) {
	s := open(t)
	MustCreateRoom(t, s, "old")
	searchRoom(t, s, "old")
	post(t, s, "old", "bob", "v1 note cache to all n=1\nwindow \xff\x00 raw bytes\n")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	unindex(t)
	s = open(t)
	defer s.Close()
	wantSearch(t, s, "old", []string{"redis"}, 10, []int64{4, 6, 3, 2})
	wantSearch(t, s, "old", []string{"bytes", "raw"}, 10, []int64{9})
	// The index goes on with the messages posted after the migration.
	post(t, s, "old", "alice", "v1 note cache to all n=1\nredis again\n")
	wantSearch(t, s, "old", []string{"again"}, 10, []int64{10})
	wantSearch(t, s, "old", []string{"redis"}, 10, []int64{4, 10, 6, 3, 2})
}

// BenchSearchIndex measures what the search index adds to a post: BenchAppend on a store
// whose database keeps the index ("indexed") and on one whose index was taken away after
// migrating ("unindexed"), one after the other in the same run. Besides the time, each
// reports the process's CPU time per append (cpu-µs/op: user and system, every goroutine
// and the driver's own work included), which a busy machine disturbs less than the time.
// open returns a store on a new database, indexed or not.
//
// The parallel pair does the same with BenchAppendParallel, where the store's group commit
// puts many appends in one transaction, as on a busy server.
func BenchSearchIndex(b *testing.B, open func(b *testing.B, indexed bool) parley.Store) {
	for _, parallel := range []bool{false, true} {
		for _, indexed := range []bool{true, false} {
			name := "unindexed"
			if indexed {
				name = "indexed"
			}
			if parallel {
				name = "parallel-" + name
			}
			b.Run(name, func(b *testing.B) {
				s := open(b, indexed)
				start := cpuTime()
				if parallel {
					BenchAppendParallel(b, s)
				} else {
					BenchAppend(b, s)
				}
				b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "cpu-µs/op")
			})
		}
	}
}

// BenchSearch measures a search of two words in a room of 2000 messages, about a tenth of
// which hold one of them.
func BenchSearch(b *testing.B, s parley.Store) {
	ctx := context.Background()
	MustCreateRoom(b, s, "bench")
	for i := range 2000 {
		body := benchBody + fmt.Sprintf("nonce %d\n", i)
		if i%10 == 0 {
			body += fmt.Sprintf("redis window %d\n", i)
		}
		post(b, s, "bench", "alice", body)
	}
	b.ReportAllocs()
	for b.Loop() {
		msgs, err := s.Search(ctx, "bench", []string{"redis", "window"}, 20)
		if err != nil || len(msgs) != 20 {
			b.Fatalf("search: %d, %v", len(msgs), err)
		}
	}
}
