package sqlite

import (
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/storetest"
)

// TestRunCache checks that a Sole store's Run answers exactly as the query does (the run, or
// the same ENOTFOUND), for rooms it holds, rooms with too many runs to hold, imported rooms,
// and runs created while others are being looked up: once CreateRun returns, Run finds it.
func TestRunCache(t *testing.T) {
	defer func(n int) { runCacheRoom = n }(runCacheRoom)
	runCacheRoom = 3
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"), Sole())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	same := func(room, id string) *parley.Run {
		t.Helper()
		got, gerr := s.Run(ctx, room, id)
		want, werr := s.Tables.Run(ctx, room, id)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || parley.ErrorCode(gerr) != parley.ErrorCode(werr) || !reflect.DeepEqual(got, want) {
			t.Fatalf("Run(%s, %s) = %+v, %v; the query says %+v, %v", room, id, got, gerr, want, werr)
		}
		return got
	}
	create := func(room, id string) {
		t.Helper()
		if err := s.CreateRun(ctx, &parley.Run{Room: room, ID: id, Passed: 3, Seat: "ci", Time: time.Now()}); err != nil {
			t.Fatalf("create run %s: %v", id, err)
		}
	}
	storetest.MustCreateRoom(t, s, "r")
	storetest.MustCreateRoom(t, s, "big")
	same("r", "x")
	create("r", "x")
	if same("r", "x") == nil {
		t.Fatal("run x not found after CreateRun")
	}
	same("r", "y")
	same("r", "we\"ird\x00 ü ☃ \xff")
	same("nowhere", "x")
	for i := range 5 {
		create("big", fmt.Sprintf("b%d", i))
		same("big", fmt.Sprintf("b%d", i))
		same("big", "none")
	}
	a := storetest.ArchiveOf(t, s, "r")
	a.Room.Name, a.Runs[0].Room, a.Seats, a.Messages, a.Asks, a.Stats = "copy", "copy", nil, nil, nil, nil
	same("copy", "x") // held as a room without runs, before it exists
	if err := s.ImportRoom(ctx, a); err != nil {
		t.Fatalf("import: %v", err)
	}
	if same("copy", "x") == nil {
		t.Fatal("run x of the imported room not found")
	}

	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				id := fmt.Sprintf("w%d-%d", w, i)
				if err := s.CreateRun(ctx, &parley.Run{Room: "r", ID: id, Seat: "ci", Time: time.Now()}); err != nil {
					t.Errorf("create run %s: %v", id, err)
					return
				}
				if _, err := s.Run(ctx, "r", id); err != nil {
					t.Errorf("Run(%s) right after CreateRun: %v", id, err)
					return
				}
				s.Run(ctx, "r", "missing") // loads the room, racing the other writers
			}
		}()
	}
	wg.Wait()
}
