package storetest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley"
)

// The crash test is one harness for every store: the test binary runs itself as the child
// (CrashChild), which appends to the database named in its environment and prints each
// acknowledged seq until Crash kills it.

// CrashChild, when env is set in the environment, opens the store it names with open and
// appends to room "crash", each post with an ask, printing every acknowledged seq until it is
// killed. Without env it skips: it runs only as Crash's child.
func CrashChild(t *testing.T, env string, open func(target string) (parley.Store, error)) {
	target := os.Getenv(env)
	if target == "" {
		t.Skip("run by the crash test")
	}
	s, err := open(target)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	for i := 0; ; i++ {
		m, err := s.Append(context.Background(), &parley.Append{
			Message: &parley.Message{Room: "crash", Seat: "alice", Format: parley.FormatText, Time: time.Now(),
				Body: fmt.Sprintf("post %d\r\n", i)},
			Asks: []*parley.Ask{{Line: 1, To: "bob", Text: "x"}},
		})
		if err != nil {
			t.Fatalf("append: %v", err)
		}
		fmt.Println(m.Seq)
	}
}

// Crash kills a process in the middle of appending to s's database (named target), three
// times, by running the test named child (which calls CrashChild with env) in a copy of this
// test binary. After each kill, the next append must neither fail nor wait for a lock the
// dead process held (a store that rolls back its open transaction when its session ends, as
// PostgreSQL does, gets 30 seconds to notice); and every acknowledged append must be there,
// whole and with its ask, the seqs gapless.
func Crash(t *testing.T, s parley.Store, env, target, child string) {
	if testing.Short() {
		t.Skip("short")
	}
	MustCreateRoom(t, s, "crash")
	for round := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^"+child+"$", "-test.count=1")
		cmd.Env = append(os.Environ(), env+"="+target)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var acked int64
		sc := bufio.NewScanner(out)
		for n := 0; n < 20+round*17 && sc.Scan(); n++ {
			if v, err := strconv.ParseInt(sc.Text(), 10, 64); err == nil {
				acked = v
			}
		}
		cmd.Process.Kill() // SIGKILL, mid-append
		cmd.Wait()
		if acked == 0 {
			t.Fatalf("round %d: the child acknowledged nothing", round)
		}

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
		asks, err := s.Asks(t.Context(), "crash", "")
		if err != nil {
			t.Fatalf("asks: %v", err)
		}
		// Every round adds one message without an ask ("after", above).
		if int64(len(msgs)) != next.Seq || int64(len(asks)) != next.Seq-int64(round+1) {
			t.Fatalf("round %d: %d messages and %d asks up to #%d, want %d and %d",
				round, len(msgs), len(asks), next.Seq, next.Seq, next.Seq-int64(round+1))
		}
		for i, m := range msgs {
			whole := m.Body == "after" || strings.HasPrefix(m.Body, "post ") && strings.HasSuffix(m.Body, "\r\n")
			if m.Seq != int64(i+1) || !whole {
				t.Fatalf("round %d: message %d is #%d %q", round, i, m.Seq, m.Body)
			}
		}
	}
}
