package postgres_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/pgtest"
	"github.com/parleyhq/parley/postgres"
	"github.com/parleyhq/parley/storetest"
)

// crashEnv, when set in the environment of this test binary, makes TestCrashChild append to
// the database it names and print each acknowledged seq until it is killed.
const crashEnv = "PARLEY_POSTGRES_CRASH_DSN"

func TestCrashChild(t *testing.T) {
	dsn := os.Getenv(crashEnv)
	if dsn == "" {
		t.Skip("run by TestCrash")
	}
	s, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	for i := 0; ; i++ {
		m, err := s.Append(context.Background(), &parley.Append{
			Message: &parley.Message{Room: "crash", Seat: "alice", Format: parley.FormatText, Time: time.Now(),
				Body: fmt.Sprintf("post %d", i)},
			Asks: []*parley.Ask{{Line: 1, To: "bob", Text: "x"}},
		})
		if err != nil {
			t.Fatalf("append: %v", err)
		}
		fmt.Println(m.Seq)
	}
}

// TestCrash kills a server process's store in the middle of appending: PostgreSQL rolls its
// open transaction back, with the seq it took, so every acknowledged append is there, the room
// is not left locked, and the next append continues without a gap.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	dsn := pgtest.DSN(t)
	s := MustOpen(t, dsn)
	storetest.MustCreateRoom(t, s, "crash")
	for round := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+dsn)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var acked int64
		sc := bufio.NewScanner(out)
		for n := 0; n < 20+round*7 && sc.Scan(); n++ {
			if v, err := strconv.ParseInt(sc.Text(), 10, 64); err == nil {
				acked = v
			}
		}
		cmd.Process.Kill()
		cmd.Wait()
		if acked == 0 {
			t.Fatalf("round %d: the child acknowledged nothing", round)
		}
		// The append waits for the killed session's row lock until PostgreSQL notices the
		// disconnect; a bounded context turns a stuck lock into a failure.
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		next, err := s.Append(ctx, &parley.Append{Message: &parley.Message{Room: "crash", Seat: "carol", Format: parley.FormatText, Body: "after"}})
		cancel()
		if err != nil {
			t.Fatalf("round %d: append after the crash: %v", round, err)
		}
		if next.Seq <= acked {
			t.Fatalf("round %d: seq after the crash %d, but %d was acknowledged", round, next.Seq, acked)
		}
		msgs, err := s.Messages(t.Context(), "crash", 0, 0)
		if err != nil {
			t.Fatalf("messages: %v", err)
		}
		if int64(len(msgs)) != next.Seq {
			t.Fatalf("round %d: %d messages up to #%d: a gap", round, len(msgs), next.Seq)
		}
		for i, m := range msgs {
			if m.Seq != int64(i+1) {
				t.Fatalf("round %d: message %d is #%d", round, i, m.Seq)
			}
		}
	}
}
