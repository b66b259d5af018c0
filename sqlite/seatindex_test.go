package sqlite

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/storetest"
)

// TestSeatIndexPages checks what seat_index is for (seatindex.go): that twenty seats posting
// at once, 500 posts each, write no more than 0.75 pages to the WAL per post. With the seat's
// entries written with each post, as the index on messages was, they wrote 1.5 (26.9 pages a
// commit of 17.7 posts); with them written a thousand at a time, 0.5. The pages are counted
// from the length of the WAL, which the test keeps from being checkpointed.
func TestSeatIndexPages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	s, err := Open(t.Context(), path, Sole(), func(s *Store) { s.ckptLimit = 1 << 30 })
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.MustCreateRoom(t, s, "r")
	if _, err := s.write.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	var page int64
	if err := s.write.QueryRow(`PRAGMA page_size`).Scan(&page); err != nil {
		t.Fatal(err)
	}
	before := s.CommitStats().Commits
	const seats, each = 20, 500
	var wg sync.WaitGroup
	for seat := range seats {
		wg.Go(func() {
			for i := range each {
				body := fmt.Sprintf("v1 note all seat%d posts its message %d, with a few words more", seat, i)
				storetest.MustAppend(t, s, &parley.Append{Message: &parley.Message{Room: "r", Seat: fmt.Sprintf("seat%d", seat),
					Time: time.Now(), Format: parley.FormatText, Body: body, Hash: []byte(body)}})
			}
		})
	}
	wg.Wait()
	commits := s.CommitStats().Commits - before
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	frames := (fi.Size() - 32) / (page + 24)
	perPost := float64(frames) / (seats * each)
	t.Logf("%d pages written in %d commits: %.2f a commit, %.3f a post", frames, commits, float64(frames)/float64(commits), perPost)
	if perPost > 0.75 {
		t.Errorf("%.3f pages written to the WAL per post, want at most 0.75", perPost)
	}
	checkSeatIndex(t, s, true)
}
