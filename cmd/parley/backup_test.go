package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/internal/servertest"
	"github.com/parleyhq/parley/sqlite"
)

func runBackupCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }}
	code := dispatch(t.Context(), e, append([]string{"backup"}, args...))
	return code, out.String(), errOut.String()
}

// TestBackupWhilePosting takes a backup of a served database, its lock held as `parley serve`
// holds it, while four seats keep posting, and holds the copy to every post acknowledged
// before the backup began, gapless, byte for byte.
func TestBackupWhilePosting(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "parley.db")
	release, err := lockDB(path)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	s := servertest.InProcess(t, servertest.InProcessOptions{DBPath: path})
	s.CreateRoom(t, "team", servertest.Generous())

	var (
		mu    sync.Mutex
		acked = map[int64]string{} // seq -> body, of every acknowledged post
		stop  = make(chan struct{})
		wg    sync.WaitGroup
	)
	for w := range 4 {
		tok := s.AddSeat(t, "team", fmt.Sprintf("w%d", w), "agent")
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := s.Client(tok)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				body := fmt.Sprintf("v1 note load to all n=1\ncost %d tokens from w%d\n", i, w)
				res, err := c.Post(context.Background(), nil, "team", []byte(body), "")
				if err != nil {
					t.Errorf("post: %v", err)
					return
				}
				mu.Lock()
				acked[res.Seq] = body
				mu.Unlock()
			}
		}()
	}
	waitAcked := func(n int) {
		for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			mu.Lock()
			got := len(acked)
			mu.Unlock()
			if got >= n {
				return
			}
		}
		t.Fatalf("fewer than %d posts acknowledged in 30s", n)
	}
	waitAcked(200)

	mu.Lock()
	before := make(map[int64]string, len(acked))
	for k, v := range acked {
		before[k] = v
	}
	mu.Unlock()
	out := filepath.Join(dir, "backup.db")
	code, stdout, stderr := runBackupCLI(t, "--db", "sqlite:"+path, out)
	mu.Lock()
	during := len(acked) - len(before)
	mu.Unlock()
	waitAcked(len(before) + during + 20) // posts go on after the backup too
	close(stop)
	wg.Wait()
	if code != 0 || !strings.Contains(stdout, "backed up "+path+" to "+out+": 1 room(s), ") {
		t.Fatalf("backup: exit %d\n%s%s", code, stdout, stderr)
	}
	t.Logf("%s (%d posts acknowledged before it, %d during it)", strings.TrimSpace(stdout), len(before), during)
	if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("backup file: %v, mode %v; want 0600", err, st.Mode().Perm())
	}
	for _, side := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(out + side); err == nil {
			t.Errorf("the backup left %s beside it", out+side)
		}
	}

	// The copy opens as a database of its own and holds every acknowledged post.
	cp, err := sqlite.Open(t.Context(), out)
	if err != nil {
		t.Fatalf("open the backup: %v", err)
	}
	defer cp.Close()
	msgs, err := cp.Messages(t.Context(), "team", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	last, err := cp.LastSeq(t.Context(), "team")
	if err != nil || last != int64(len(msgs)) {
		t.Fatalf("the backup's last seq %d (%v) for %d messages", last, err, len(msgs))
	}
	for i, m := range msgs {
		if m.Seq != int64(i+1) {
			t.Fatalf("the backup's seqs have a gap at #%d", m.Seq)
		}
	}
	for seq, body := range before {
		if seq > int64(len(msgs)) {
			t.Fatalf("acknowledged #%d is not in the backup (it holds %d)", seq, len(msgs))
		}
		if msgs[seq-1].Body != body {
			t.Fatalf("#%d in the backup is %q, acknowledged as %q", seq, msgs[seq-1].Body, body)
		}
	}
	if len(msgs) >= len(before)+during+20 {
		t.Errorf("the backup holds %d messages, as many as were posted after it", len(msgs))
	}
}

func TestBackupRefusals(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "parley.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	taken := filepath.Join(dir, "taken.db")
	if err := os.WriteFile(taken, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	notParley := filepath.Join(dir, "other.db")
	if err := os.WriteFile(notParley, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--db", path, taken}, 1, "exists; a backup never overwrites a file"},
		{[]string{"--db", filepath.Join(dir, "missing.db"), filepath.Join(dir, "a.db")}, 1, "no such file"},
		{[]string{"--db", notParley, filepath.Join(dir, "b.db")}, 1, "is not a parley database"},
		{[]string{"--db", "postgres://parley@127.0.0.1/parley", filepath.Join(dir, "c.db")}, 2, "pg_dump"},
		{[]string{"--db", path}, 2, "want OUT"},
	}
	for _, tc := range cases {
		code, out, errOut := runBackupCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("backup %q: exit %d, want %d with %q\n%s%s", tc.args, code, tc.code, tc.want, out, errOut)
		}
	}
	if b, _ := os.ReadFile(taken); string(b) != "keep" {
		t.Errorf("the backup overwrote an existing file")
	}
	for _, name := range []string{"a.db", "b.db", "c.db"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("a failed backup left %s behind", name)
		}
	}
}
