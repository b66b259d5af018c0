package sqlite

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley"
)

// TestStorageFull makes SQLite run out of room for real (PRAGMA max_page_count on the write
// connection gives a genuine SQLITE_FULL, "database or disk is full"), checks that the store
// names it, and that once the cap is raised the store takes appends again with every
// acknowledged message intact.
func TestStorageFull(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := s.CreateRoom(t.Context(), &parley.Room{Name: "r", Policy: parley.DefaultPolicy(), CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateSeat(t.Context(), &parley.Seat{Room: "r", Name: "a", Role: parley.RoleAgent, TokenHash: []byte("h"), CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	var pages int
	if err := s.write.QueryRowContext(t.Context(), "PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := s.write.ExecContext(t.Context(), fmt.Sprintf("PRAGMA max_page_count = %d", pages+2)); err != nil {
		t.Fatal(err)
	}
	appendN := func(i int) error {
		body := fmt.Sprintf("fact %d %s\n", i, strings.Repeat("x", 2000))
		_, err := s.Append(t.Context(), &parley.Append{Message: &parley.Message{Room: "r", Seat: "a", Time: now, Format: parley.FormatText,
			Body: body, Hash: []byte(fmt.Sprint(i)), Tokens: 1}})
		return err
	}
	acked := 0
	var full error
	for i := 1; i <= 1000; i++ {
		if err := appendN(i); err != nil {
			full = err
			break
		}
		acked = i
	}
	if full == nil {
		t.Fatal("1000 appends fit in two pages")
	}
	if !s.StorageFull(full) {
		t.Fatalf("the store does not name a full database: %v", full)
	}
	if s.StorageFull(fmt.Errorf("other")) || s.StorageFull(nil) {
		t.Error("StorageFull of an unrelated error")
	}
	if _, err := s.write.ExecContext(t.Context(), "PRAGMA max_page_count = 1073741823"); err != nil {
		t.Fatal(err)
	}
	if err := appendN(acked + 1); err != nil {
		t.Fatalf("append after the cap was raised: %v", err)
	}
	msgs, err := s.Messages(t.Context(), "r", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != acked+1 {
		t.Fatalf("%d messages stored, %d acknowledged", len(msgs), acked+1)
	}
	for i, m := range msgs {
		if m.Seq != int64(i+1) || !strings.HasPrefix(m.Body, fmt.Sprintf("fact %d ", i+1)) {
			t.Fatalf("message %d: seq %d body %.20q", i+1, m.Seq, m.Body)
		}
	}
}
