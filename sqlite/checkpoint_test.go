package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/storetest"
)

// TestCheckpointer: under appends that never leave the committer idle for long, the
// checkpointer copies the WAL beside the committer, and once the WAL holds ckptLimit pages the
// committer checkpoints itself, so that the WAL is written from its start again and stays
// bounded; SQLite's own checkpoint is only the backstop (wal_autocheckpoint ckptBackstop); the
// data reads back whole after reopening.
func TestCheckpointer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	const limit = 1500
	s, err := Open(t.Context(), path, Sole(), noIdleIndex(), func(s *Store) { s.ckptLimit = limit })
	if err != nil {
		t.Fatal(err)
	}
	var auto int
	if err := s.write.QueryRow(`PRAGMA wal_autocheckpoint`).Scan(&auto); err != nil || auto != ckptBackstop {
		t.Fatalf("writer: wal_autocheckpoint = %d, %v; want %d", auto, err, ckptBackstop)
	}
	storetest.MustCreateRoom(t, s, "r")
	const serial, seats, each = 300, 10, 120
	maxWAL := int64(0)
	for j := range serial {
		postCk(t, s, "one", j)
		if st, err := os.Stat(path + "-wal"); err == nil {
			maxWAL = max(maxWAL, st.Size())
		}
	}
	var wg sync.WaitGroup
	for i := range seats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				postCk(t, s, fmt.Sprintf("s%d", i), j)
			}
		}()
	}
	wg.Wait()
	if st, err := os.Stat(path + "-wal"); err == nil {
		maxWAL = max(maxWAL, st.Size())
	}
	if s.ckptFrames.Load() == 0 || s.ckpt.copies.Load() == 0 {
		t.Fatalf("in %d writes the committer checkpointed %d frames, the checkpointer %d times; want both",
			serial+seats*each, s.ckptFrames.Load(), s.ckpt.copies.Load())
	}
	// The WAL starts again after each of the committer's checkpoints: it holds the limit and
	// what the estimate per batch missed since the checkpointer's last report, well under
	// twice the limit (1,300 to 1,950 pages in five runs; without the committer's
	// checkpoints 4,350).
	if bound := int64(2*limit) * 4096; maxWAL > bound {
		t.Fatalf("the WAL grew to %d bytes, more than %d", maxWAL, bound)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	msgs, err := s.Messages(t.Context(), "r", 0, 0)
	if err != nil || len(msgs) != serial+seats*each {
		t.Fatalf("after reopening: %d messages, %v; want %d", len(msgs), err, serial+seats*each)
	}
}

// TestCheckpointerIdle: once the committer has had no write for idleAfter, the checkpointer
// copies the whole WAL, and the next write starts the WAL again, without the committer ever
// stopping for a checkpoint of its own.
func TestCheckpointerIdle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	s, err := Open(t.Context(), path, Sole(), func(s *Store) { s.idleAfter = 20 * time.Millisecond })
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.MustCreateRoom(t, s, "r")
	for j := range 200 { // one batch each: more than ckptIdle pages, fewer than ckptEvery
		postCk(t, s, "one", j)
	}
	walFrames := func() int64 {
		t.Helper()
		db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var busy, log, copied int64
		if err := db.QueryRow(`PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &log, &copied); err != nil {
			t.Fatal(err)
		}
		return log
	}
	for deadline := time.Now().Add(10 * time.Second); !s.walStarts(s.commits.Load()); {
		if time.Now().After(deadline) {
			t.Fatalf("no idle copy of the whole WAL: %d copies, the WAL holds %d frames", s.ckpt.copies.Load(), walFrames())
		}
		time.Sleep(5 * time.Millisecond)
	}
	postCk(t, s, "one", 200)
	if n := walFrames(); n == 0 || n > 40 {
		t.Fatalf("after the idle copy and one write the WAL holds %d frames; want that write's few", n)
	}
	if n := s.ckptFrames.Load(); n != 0 {
		t.Fatalf("the committer checkpointed itself (%d frames); the checkpointer's copy was enough", n)
	}
}

func postCk(t testing.TB, s *Store, seat string, j int) {
	body := fmt.Sprintf("%s m%d", seat, j)
	if _, err := s.Append(context.Background(), &parley.Append{Message: &parley.Message{
		Room: "r", Seat: seat, Time: time.Now(), Format: parley.FormatText, Body: body, Hash: []byte(body)}}); err != nil {
		t.Errorf("append: %v", err)
	}
}
