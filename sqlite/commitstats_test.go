package sqlite

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/storetest"
)

// TestCommitStats checks the committer's counters against counts made here. Appends one
// after the other, each waiting for its answer, are a commit each; a repeat refused commits
// nothing; appends sent at once share commits, each counted once. The times are bounded by
// the test's own clock.
func TestCommitStats(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"), Sole())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.MustCreateRoom(t, s, "r")

	before, start := s.CommitStats(), time.Now()
	appendN(t, s, "r", 1, 5)
	took := time.Since(start)
	d := s.CommitStats().Since(before)
	if d.Commits != 5 || d.Writes != 5 {
		t.Errorf("5 appends one after the other: %d commits of %d writes, want 5 of 5", d.Commits, d.Writes)
	}
	if d.Commit <= 0 || d.Busy < d.Commit || d.Busy > took {
		t.Errorf("5 commits: %v in COMMIT, %v busy, in %v of the test's time", d.Commit, d.Busy, took)
	}

	// The last body again, within the dedup window: refused, nothing committed.
	before = s.CommitStats()
	body := "v1 note m5 to all n=0\nlag5 common\n"
	_, err = s.Append(t.Context(), &parley.Append{Message: &parley.Message{Room: "r", Seat: "alice", Time: time.Now(),
		Format: parley.FormatConvention, Body: body, Hash: []byte(body)}, DedupLast: 10})
	var pe *parley.Error
	if !errors.As(err, &pe) || pe.Code != parley.ECONFLICT {
		t.Fatalf("a repeat: %v, want %s", err, parley.ECONFLICT)
	}
	if d := s.CommitStats().Since(before); d.Commits != 0 || d.Writes != 0 {
		t.Errorf("a refused repeat: %d commits of %d writes, want none", d.Commits, d.Writes)
	}

	// 64 appends at once from 64 goroutines.
	const n = 64
	before = s.CommitStats()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			b := fmt.Sprintf("v1 note burst%d to all n=0\n", i)
			_, err := s.Append(t.Context(), &parley.Append{Message: &parley.Message{Room: "r", Seat: fmt.Sprintf("s%d", i), Time: time.Now(),
				Format: parley.FormatConvention, Body: b, Hash: []byte(b)}})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	d = s.CommitStats().Since(before)
	if d.Writes != n || d.Commits < 1 || d.Commits > n {
		t.Errorf("%d appends at once: %d commits of %d writes, want 1 to %d commits of %d", n, d.Commits, d.Writes, n, n)
	}
	if last, err := s.LastSeq(t.Context(), "r"); err != nil || last != 5+n {
		t.Errorf("last seq %d (%v), want %d", last, err, 5+n)
	}
	t.Logf("%d appends at once: %d commits, %v busy, %v in COMMIT", n, d.Commits, d.Busy, d.Commit)
}
