package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley"
)

// TestStmtCacheNoDeadlock posts and counts concurrently on a fresh store, so that a statement
// is prepared on the writer (AddStat's, on first use) while appends hold the writer's one
// connection in a transaction. The cache once held its lock while preparing, and an append
// waiting for that lock inside its transaction deadlocked with it.
func TestStmtCacheNoDeadlock(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := s.CreateRoom(ctx, &parley.Room{Name: "r", Policy: parley.DefaultPolicy(), CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 4 {
				seat := fmt.Sprintf("s%d", g)
				_, err := s.Append(ctx, &parley.Append{Message: &parley.Message{
					Room: "r", Seat: seat, Time: time.Now(), Format: parley.FormatText,
					Body: fmt.Sprintf("m %d %d", g, i), Hash: []byte(fmt.Sprintf("h%d.%d", g, i)),
				}})
				if err == nil {
					err = s.AddStat(ctx, "r", seat, fmt.Sprintf("k%d", i), 1)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("append or add stat (a deadlock ends as a context error): %v", err)
	}
	if last, err := s.LastSeq(ctx, "r"); err != nil || last != 64 {
		t.Errorf("last seq %d, %v, want 64", last, err)
	}
}

func TestAnonymous(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`SELECT a FROM t WHERE x = $1 AND y = $2`, `SELECT a FROM t WHERE x = ? AND y = ?`},
		{`VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`, `VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{`SELECT 1`, `SELECT 1`},
		{`WHERE a = $1 AND ($2 = '' OR b = $2)`, `WHERE a = $1 AND ($2 = '' OR b = $2)`}, // $2 twice: kept
		{`WHERE a = $2 AND b = $1`, `WHERE a = $2 AND b = $1`},                           // out of order: kept
		{`WHERE a = ?1 AND b = ?1`, `WHERE a = ?1 AND b = ?1`},
		{`SELECT '$' || x FROM t WHERE y = $1`, `SELECT '$' || x FROM t WHERE y = ?`},
	} {
		if got := anonymous(tc.in); got != tc.want {
			t.Errorf("anonymous(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
