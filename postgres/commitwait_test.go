package postgres

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/pgtest"
)

// TestRoomBatchesHold: a batch waits while ops are announced on their way to its room, takes
// each as it is queued, and runs once none is announced; it is not held for another room's
// announcements, and an announced op that never comes holds it for the bound, no longer.
func TestRoomBatchesHold(t *testing.T) {
	var mu sync.Mutex
	coming := map[string]int{}
	announce := func(room string, d int) { mu.Lock(); coming[room] += d; mu.Unlock() }
	ran := make(chan []int, 10)
	run := func(room string, batch []int) { ran <- append([]int(nil), batch...) }
	newBatches := func(hold time.Duration) *roomBatches[int] {
		return &roomBatches[int]{hold: hold, holdFor: func(room string) bool { mu.Lock(); defer mu.Unlock(); return coming[room] > 0 }}
	}
	expectNone := func(what string) {
		select {
		case b := <-ran:
			t.Fatalf("%s: a batch %v ran while a post was announced", what, b)
		case <-time.After(150 * time.Millisecond):
		}
	}
	expect := func(what string, want ...int) {
		select {
		case b := <-ran:
			if fmt.Sprint(b) != fmt.Sprint(want) {
				t.Fatalf("%s: batch %v, want %v", what, b, want)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: no batch ran", what)
		}
	}

	b := newBatches(time.Minute)
	announce("r", 1)
	b.add("r", 1, 8, run)
	expectNone("one announced")
	announce("r", 1)
	b.add("r", 2, 8, run) // queued, but one more is announced
	expectNone("still one announced")
	announce("r", -2) // the second arrives: withdrawn just before it is queued
	b.add("r", 3, 8, run)
	expect("all arrived", 1, 2, 3)

	// Another room's announcement holds nothing here; nor does a full batch wait.
	announce("x", 1)
	b.add("r", 4, 8, run)
	expect("other room", 4)
	announce("f", 1)
	b.add("f", 5, 1, run) // room f's goroutine takes batches of 1
	expect("full batch", 5)
	announce("f", -1)
	announce("x", -1)

	// A post announced that never comes holds the batch for the bound.
	b = newBatches(300 * time.Millisecond)
	announce("r", 1)
	start := time.Now()
	b.add("r", 6, 8, run)
	expect("bound", 6)
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("ran after %v, before the bound of 300ms", took)
	}
	announce("r", -1)
}

// TestCommitWaitPostgres: on the real store, a room's append is held while the room service
// has announced another post to the room (PostsComing), and both are answered once it comes;
// a lone append, or one while a post to another room is announced, is committed at once even
// with a bound of a minute; no announcement is left behind.
func TestCommitWaitPostgres(t *testing.T) {
	s, err := Open(t.Context(), pgtest.DSN(t), WithCommitWait(time.Minute))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	if s.CommitWait() != time.Minute {
		t.Fatalf("CommitWait() = %v", s.CommitWait())
	}
	for _, r := range []string{"r", "x"} {
		if err := s.CreateRoom(t.Context(), &parley.Room{Name: r, Policy: parley.DefaultPolicy(), CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	var n atomic.Int64
	appendTo := func(room string) <-chan error {
		done := make(chan error, 1)
		body := fmt.Sprintf("post %d", n.Add(1))
		go func() {
			_, err := s.Append(context.Background(), &parley.Append{Message: &parley.Message{
				Room: room, Seat: "a", Time: time.Now(), Format: parley.FormatText, Body: body, Hash: []byte(body)}})
			done <- err
		}()
		return done
	}
	wait := func(what string, done <-chan error) {
		t.Helper()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: held (a minute's bound)", what)
		}
	}
	wait("a lone append", appendTo("r"))
	s.PostsComing("x", 1)
	wait("an append while another room's post is announced", appendTo("r"))
	s.PostsComing("x", -1)

	s.PostsComing("r", 1) // as the room service does once a post passed authentication
	first := appendTo("r")
	select {
	case err := <-first:
		t.Fatalf("the first append returned (%v) while a post to its room was announced", err)
	case <-time.After(300 * time.Millisecond):
	}
	s.PostsComing("r", -1) // and just before it appends: Append announces itself until queued
	second := appendTo("r")
	wait("the held append", first)
	wait("the one it waited for", second)

	msgs, err := s.Messages(t.Context(), "r", 0, 0)
	if err != nil || len(msgs) != 4 {
		t.Fatalf("stored %d messages in r, %v; want 4", len(msgs), err)
	}
	for i, m := range msgs {
		if m.Seq != int64(i+1) {
			t.Errorf("message %d has seq %d", i, m.Seq)
		}
	}
	s.comingMu.Lock()
	left := len(s.coming)
	s.comingMu.Unlock()
	if left != 0 {
		t.Errorf("announcements left: %v", s.coming)
	}
}
