package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/parleyhq/parley"
)

// openWait opens a store whose committer holds a batch up to wait for announced posts, with
// a room "r".
func openWait(t *testing.T, wait time.Duration) *Store {
	t.Helper()
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"), WithCommitWait(wait))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.CreateRoom(t.Context(), &parley.Room{Name: "r", Policy: parley.DefaultPolicy(), CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	return s
}

func waitAppend(s *Store, body string) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := s.Append(context.Background(), &parley.Append{
			Message: &parley.Message{Room: "r", Seat: "a", Time: time.Now(), Format: parley.FormatText, Body: body, Hash: []byte(body)},
		})
		done <- err
	}()
	return done
}

// batches is how many batches the committer has run.
func batches(s *Store) int64 { return s.commits.Load() / 2 }

// TestCommitWaitLoneWrite: with nothing announced, a write is committed at once, whatever
// the bound: with a bound of a minute, a held write would not return within the test.
func TestCommitWaitLoneWrite(t *testing.T) {
	s := openWait(t, time.Minute)
	for i := range 3 {
		select {
		case err := <-waitAppend(s, fmt.Sprint("lone ", i)):
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("lone write %d held with nothing announced (coming %d)", i, s.coming.Load())
		}
	}
	if n := s.coming.Load(); n != 0 {
		t.Errorf("%d posts still announced after three appends", n)
	}
}

// TestCommitWaitJoins: a write that arrives while a post is announced is held for it, and the
// post, when it arrives, joins its batch: one commit for both.
func TestCommitWaitJoins(t *testing.T) {
	s := openWait(t, time.Minute)
	before := batches(s)
	s.PostsComing("r", 1) // as the room service does once a post passed authentication
	first := waitAppend(s, "first")
	select {
	case err := <-first:
		t.Fatalf("the first write returned (%v) while a post was announced", err)
	case <-time.After(200 * time.Millisecond):
	}
	s.PostsComing("r", -1) // and just before it appends: Append announces itself
	second := waitAppend(s, "second")
	for _, done := range []<-chan error{first, second} {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("an append did not return")
		}
	}
	if n := batches(s) - before; n != 1 {
		t.Errorf("%d batches for the two writes, want 1", n)
	}
	msgs, err := s.Messages(t.Context(), "r", 0, 0)
	if err != nil || len(msgs) != 2 || msgs[0].Body != "first" || msgs[1].Body != "second" {
		t.Fatalf("stored %v, %v; want first then second", msgs, err)
	}
	if n := s.coming.Load(); n != 0 {
		t.Errorf("%d posts still announced", n)
	}
}

// TestCommitWaitBound: a post announced that never comes holds a batch for the bound, no
// longer; with a bound of 0 nothing is held.
func TestCommitWaitBound(t *testing.T) {
	for _, wait := range []time.Duration{0, 300 * time.Millisecond} {
		t.Run(wait.String(), func(t *testing.T) {
			s := openWait(t, wait)
			s.PostsComing("r", 1)
			defer s.PostsComing("r", -1)
			start := time.Now()
			select {
			case err := <-waitAppend(s, "held"):
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("held past its bound")
			}
			if took := time.Since(start); took < wait {
				t.Errorf("returned after %v, before the bound %v with a post announced", took, wait)
			}
		})
	}
}

// TestCommitWaitWithdrawn: an append that never reaches the committer (refused by its seat
// check, cancelled, or after Close) leaves nothing announced.
func TestCommitWaitWithdrawn(t *testing.T) {
	s := openWait(t, time.Minute)
	msg := func() *parley.Message {
		return &parley.Message{Room: "r", Seat: "a", Time: time.Now(), Format: parley.FormatText, Body: "x", Hash: []byte("x")}
	}
	// A poster not seated in the room: refused before the committer.
	if _, err := s.Append(t.Context(), &parley.Append{Message: msg(), Poster: &parley.Seat{Room: "r", Name: "ghost"}}); err == nil {
		t.Fatal("an append by a seat not in the room was stored")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Append(ctx, &parley.Append{Message: msg()}); err == nil {
		t.Fatal("an append with a cancelled context was stored")
	}
	if n := s.coming.Load(); n != 0 {
		t.Fatalf("%d posts announced after two refused appends", n)
	}
	s.Close()
	if _, err := s.Append(t.Context(), &parley.Append{Message: msg()}); err == nil {
		t.Fatal("an append after Close was stored")
	}
	if n := s.coming.Load(); n != 0 {
		t.Errorf("%d posts announced after an append to a closed store", n)
	}
}
