package sqlite

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/parleyhq/parley/storetest"
)

// BenchmarkDupLookup times dedup's lookup by hash as it runs when the committer's memory cannot
// answer (duplicate, on the read pool), in a room of 20 seats and 20,000 messages: with the
// room's tail (the messages without their seat_index entries, seatindex.go) empty, and with
// seatIndexTail-1 of them, about the most a room waits with (a batch may add its own).
func BenchmarkDupLookup(b *testing.B) {
	s, err := Open(b.Context(), filepath.Join(b.TempDir(), "parley.db"), Sole())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	storetest.MustCreateRoom(b, s, "r")
	post := func(i int) { postCk(b, s, fmt.Sprintf("s%d", i%20), i) }
	n := 0
	for ; n < 20000; n++ {
		post(n)
	}
	lookup := func(b *testing.B) {
		for b.Loop() {
			if seq, err := duplicate(b.Context(), s.r, "r", "s3", []byte("absent"), time.Now().Add(-time.Hour), 0, nil); err != nil || seq != 0 {
				b.Fatal(seq, err)
			}
		}
	}
	for roomTail(b, s, "r") != 0 {
		post(n)
		n++
	}
	b.Run("tail=0", lookup)
	for roomTail(b, s, "r") != seatIndexTail-1 {
		post(n)
		n++
	}
	b.Run(fmt.Sprintf("tail=%d", seatIndexTail-1), lookup)
}
