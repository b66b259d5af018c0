package sqlite_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/sqlite"
	"github.com/parleyhq/parley/storetest"
)

// crashEnv, when set in the environment of this test binary, makes TestCrashChild append to
// the database it names and print each acknowledged seq until it is killed.
const crashEnv = "PARLEY_SQLITE_CRASH_DB"

func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("run by TestCrash")
	}
	s, err := sqlite.Open(context.Background(), path)
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

// TestCrash kills a process in the middle of appending and checks that, after recovery, every
// append it acknowledged is there, whole, and that seqs continue without a gap.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	path := filepath.Join(t.TempDir(), "parley.db")
	s := mustOpenPath(t, path)
	storetest.MustCreateRoom(t, s, "crash")

	for round := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var acked int64
		sc := bufio.NewScanner(out)
		for n := 0; n < 50+round*37 && sc.Scan(); n++ {
			if v, err := strconv.ParseInt(sc.Text(), 10, 64); err == nil {
				acked = v
			}
		}
		cmd.Process.Kill() // SIGKILL, mid-append
		cmd.Wait()
		if acked == 0 {
			t.Fatalf("round %d: the child acknowledged nothing", round)
		}

		last, err := s.LastSeq(t.Context(), "crash")
		if err != nil {
			t.Fatalf("last seq: %v", err)
		}
		if last < acked {
			t.Fatalf("round %d: last seq %d, but %d was acknowledged", round, last, acked)
		}
		msgs, err := s.Messages(t.Context(), "crash", 0, 0)
		if err != nil {
			t.Fatalf("messages: %v", err)
		}
		asks, err := s.Asks(t.Context(), "crash", "")
		if err != nil {
			t.Fatalf("asks: %v", err)
		}
		// Each earlier round added one message without an ask ("after", below).
		if int64(len(msgs)) != last || int64(len(asks)) != last-int64(round) {
			t.Fatalf("round %d: %d messages and %d asks, want %d and %d", round, len(msgs), len(asks), last, last-int64(round))
		}
		for i, m := range msgs {
			whole := m.Body == "after" || strings.HasPrefix(m.Body, "post ") && strings.HasSuffix(m.Body, "\r\n")
			if m.Seq != int64(i+1) || !whole {
				t.Fatalf("round %d: message %d is #%d %q", round, i, m.Seq, m.Body)
			}
		}
		next := storetest.MustAppend(t, s, &parley.Append{Message: &parley.Message{Room: "crash", Seat: "carol", Format: parley.FormatText, Body: "after"}})
		if next.Seq != last+1 {
			t.Fatalf("round %d: seq after recovery %d, want %d", round, next.Seq, last+1)
		}
	}
}
