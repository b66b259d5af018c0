package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/storetest"
)

// TestCheckpointer: SQLite's own checkpoint is only the backstop (wal_autocheckpoint
// ckptBackstop); the checkpointer copies the WAL beside the committer, and the committer
// checkpoints what is left when idle, so that the WAL is written from its start again and stays short, under appends one at a time and many at once; the data reads
// back whole after reopening.
func TestCheckpointer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	s, err := Open(t.Context(), path, Sole())
	if err != nil {
		t.Fatal(err)
	}
	var auto int
	if err := s.write.QueryRow(`PRAGMA wal_autocheckpoint`).Scan(&auto); err != nil || auto != ckptBackstop {
		t.Fatalf("writer: wal_autocheckpoint = %d, %v; want %d", auto, err, ckptBackstop)
	}
	storetest.MustCreateRoom(t, s, "r")
	post := func(seat string, j int) {
		body := fmt.Sprintf("%s m%d", seat, j)
		if _, err := s.Append(context.Background(), &parley.Append{Message: &parley.Message{
			Room: "r", Seat: seat, Time: time.Now(), Format: parley.FormatText, Body: body, Hash: []byte(body)}}); err != nil {
			t.Errorf("append: %v", err)
		}
	}
	const serial, seats, each = 300, 10, 120
	maxWAL := int64(0)
	for j := range serial {
		post("one", j)
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
				post(fmt.Sprintf("s%d", i), j)
			}
		}()
	}
	wg.Wait()
	// The committer's checkpoint comes at its first idle moment once the checkpointer is done.
	for deadline := time.Now().Add(10 * time.Second); s.ckptFrames.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if s.ckptFrames.Load() == 0 || s.ckpt.copies.Load() == 0 {
		t.Fatalf("in %d writes the committer checkpointed %d frames, the checkpointer %d times; want both",
			serial+seats*each, s.ckptFrames.Load(), s.ckpt.copies.Load())
	}
	// The WAL restarts after each checkpoint: it never nears the backstop (without the
	// committer's checkpoints it reaches it, without any it grows by every commit).
	if limit := int64(ckptBackstop) * 4096 / 2; maxWAL > limit {
		t.Fatalf("the WAL grew to %d bytes, more than %d", maxWAL, limit)
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
