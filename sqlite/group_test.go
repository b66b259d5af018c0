package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley"
)

// TestGroupCommitIsolation runs appends that share transactions, where some must fail: each
// hash is posted four times by its seat at once, so three of every four writes in a batch
// are refused as repeats (found before they write, or, not Sole, after the seq's UPDATE, when
// the batch runs again without them: group.go). Exactly one of each must be
// stored, with gapless seqs, and every refusal must name the stored one. Sole, the repeats
// are found by the dedup memory and the batch's own appends (dedup.go).
func TestGroupCommitIsolation(t *testing.T) {
	eachSole(t, testGroupCommitIsolation)
}

func testGroupCommitIsolation(t *testing.T, s *Store) {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := s.CreateRoom(ctx, &parley.Room{Name: "r", Policy: parley.DefaultPolicy(), CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	const bodies, copies = 40, 4
	var mu sync.Mutex
	stored := map[string]int64{}
	refused := map[string][]int64{}
	var wg sync.WaitGroup
	for i := range bodies {
		for range copies {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := fmt.Sprintf("m%d", i)
				m, err := s.Append(ctx, &parley.Append{
					Message:    &parley.Message{Room: "r", Seat: "a", Time: time.Now(), Format: parley.FormatText, Body: body, Hash: []byte(body)},
					DedupSince: time.Now().Add(-time.Hour), DedupLast: 500,
				})
				mu.Lock()
				defer mu.Unlock()
				var pe *parley.Error
				switch {
				case err == nil:
					if prev, dup := stored[body]; dup {
						t.Errorf("%s stored twice: #%d and #%d", body, prev, m.Seq)
					}
					stored[body] = m.Seq
				case errors.As(err, &pe) && pe.Code == parley.ECONFLICT:
					refused[body] = append(refused[body], pe.Fields["seq"].(int64))
				default:
					t.Errorf("%s: %v", body, err)
				}
			}()
		}
	}
	wg.Wait()
	if len(stored) != bodies {
		t.Fatalf("%d bodies stored, want %d", len(stored), bodies)
	}
	msgs, err := s.Messages(ctx, "r", 0, 0)
	if err != nil || len(msgs) != bodies {
		t.Fatalf("%d messages, %v", len(msgs), err)
	}
	for i, m := range msgs {
		if m.Seq != int64(i+1) || stored[m.Body] != m.Seq {
			t.Errorf("message %d: #%d %s (stored as #%d)", i, m.Seq, m.Body, stored[m.Body])
		}
		if seqs := refused[m.Body]; len(seqs) != copies-1 {
			t.Errorf("%s refused %d times, want %d", m.Body, len(seqs), copies-1)
		} else {
			for _, seq := range seqs {
				if seq != m.Seq {
					t.Errorf("%s refused as a repeat of #%d, stored as #%d", m.Body, seq, m.Seq)
				}
			}
		}
	}
}

// TestGroupCommitCancelledAndClosed checks that a write whose context has ended stores
// nothing, and that writes after Close fail instead of hanging.
func TestGroupCommitCancelledAndClosed(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateRoom(t.Context(), &parley.Room{Name: "r", Policy: parley.DefaultPolicy(), CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	msg := &parley.Message{Room: "r", Seat: "a", Time: time.Now(), Format: parley.FormatText, Body: "x"}
	if _, err := s.Append(ctx, &parley.Append{Message: msg}); !errors.Is(err, context.Canceled) {
		t.Errorf("append with a cancelled context: %v", err)
	}
	if last, _ := s.LastSeq(t.Context(), "r"); last != 0 {
		t.Errorf("last seq %d after a cancelled append", last)
	}
	s.Close()
	done := make(chan error, 1)
	go func() {
		_, err := s.Append(t.Context(), &parley.Append{Message: msg})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("append after Close succeeded")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("append after Close hangs")
	}
}
