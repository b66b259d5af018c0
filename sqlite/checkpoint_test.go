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

// TestCheckpointer: the writer never checkpoints (wal_autocheckpoint 0), and the
// checkpointer, kicked by the committer's writes alone (its timer set to an hour), copies the
// WAL into the database while appends go on; the data reads back whole after reopening.
func TestCheckpointer(t *testing.T) {
	defer func(d time.Duration) { ckptIdle = d }(ckptIdle)
	ckptIdle = time.Hour
	path := filepath.Join(t.TempDir(), "parley.db")
	s, err := Open(t.Context(), path, Sole())
	if err != nil {
		t.Fatal(err)
	}
	var auto int
	if err := s.write.QueryRow(`PRAGMA wal_autocheckpoint`).Scan(&auto); err != nil || auto != 0 {
		t.Fatalf("writer: wal_autocheckpoint = %d, %v; want 0", auto, err)
	}
	storetest.MustCreateRoom(t, s, "r")
	db0, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	const seats, each = 10, 40 // 400 writes: past ckptEvery
	var wg sync.WaitGroup
	for i := range seats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				body := fmt.Sprintf("s%d m%d", i, j)
				if _, err := s.Append(context.Background(), &parley.Append{Message: &parley.Message{
					Room: "r", Seat: fmt.Sprintf("s%d", i), Time: time.Now(), Format: parley.FormatText, Body: body, Hash: []byte(body)}}); err != nil {
					t.Errorf("append: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for s.ckptFrames.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if s.ckptFrames.Load() == 0 {
		t.Fatal("no checkpoint copied a frame after 400 writes")
	}
	// The copied pages are in the database file itself.
	if db1, err := os.Stat(path); err != nil || db1.Size() <= db0.Size() {
		t.Fatalf("database file %d bytes before the appends, %v after; want it grown by the checkpoint", db0.Size(), db1)
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
	if err != nil || len(msgs) != seats*each {
		t.Fatalf("after reopening: %d messages, %v; want %d", len(msgs), err, seats*each)
	}
}
