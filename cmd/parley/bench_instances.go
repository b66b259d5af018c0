package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// serveBinary is the parley executable that `bench server --instances` starts; empty means
// this one (os.Executable). Tests, whose executable is the test binary, set a built one.
var serveBinary string

// serveStartTimeout bounds how long one started `parley serve` may take to say where it
// listens (it migrates the database first).
const serveStartTimeout = time.Minute

// instance is one `parley serve` process started by the bench.
type instance struct {
	cmd    *exec.Cmd
	url    string
	stderr *tailBuffer
	waited chan struct{} // closed when the process has exited
}

// profileEnv names a directory to profile the started servers into: with
// PARLEY_BENCH_SERVE_CPUPROFILE=DIR, instance i (from 1) runs with --cpuprofile DIR/serve-i.prof,
// written when the bench stops it (go tool pprof -top DIR/serve-1.prof). The directory must
// exist.
const profileEnv = "PARLEY_BENCH_SERVE_CPUPROFILE"

// serveArgs are the arguments of instance i (from 1) of `parley serve` on db; profileDir, when
// not empty, is where it writes its CPU profile (profileEnv).
func serveArgs(i int, db, profileDir string) []string {
	args := []string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--log-level", "warn"}
	if profileDir != "" {
		args = append(args, "--cpuprofile", filepath.Join(profileDir, fmt.Sprintf("serve-%d.prof", i)))
	}
	return args
}

// startInstances starts n `parley serve` processes on db (a PostgreSQL URL), each on a free
// loopback port, sharing admin as their admin token, and returns them once each listens.
// stop ends them (SIGTERM, then SIGKILL after 10 s) and waits for them.
func startInstances(ctx context.Context, n int, db, admin string, extra ...string) (_ []*instance, stop func(), err error) {
	bin := serveBinary
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return nil, nil, fmt.Errorf("find the parley executable to start: %w", err)
		}
	}
	profileDir := os.Getenv(profileEnv)
	if profileDir != "" {
		if st, err := os.Stat(profileDir); err != nil || !st.IsDir() {
			return nil, nil, fmt.Errorf("%s=%q: not a directory; create it first", profileEnv, profileDir)
		}
	}
	var all []*instance
	stop = func() {
		for _, in := range all {
			in.cmd.Process.Signal(syscall.SIGTERM)
		}
		for _, in := range all {
			select {
			case <-in.waited:
			case <-time.After(10 * time.Second):
				in.cmd.Process.Kill()
				<-in.waited
			}
		}
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	for i := range n {
		cmd := exec.Command(bin, append(serveArgs(i+1, db, profileDir), extra...)...)
		cmd.Env = append(os.Environ(), "PARLEY_ADMIN_TOKEN="+admin, "PARLEY_ADDR=", "PARLEY_DB=")
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, nil, err
		}
		in := &instance{cmd: cmd, stderr: &tailBuffer{max: 4096}, waited: make(chan struct{})}
		cmd.Stderr = in.stderr
		if err := cmd.Start(); err != nil {
			return nil, nil, fmt.Errorf("start %s serve: %w", bin, err)
		}
		all = append(all, in)
		urls := make(chan string, 1)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if u, ok := strings.CutPrefix(sc.Text(), "parley: listening on "); ok {
					urls <- u
					break
				}
			}
			io.Copy(io.Discard, out)
			cmd.Wait()
			close(in.waited)
		}()
		select {
		case in.url = <-urls:
		case <-in.waited:
			return nil, nil, fmt.Errorf("instance %d of parley serve exited before listening: %s", i+1, strings.TrimSpace(in.stderr.String()))
		case <-time.After(serveStartTimeout):
			return nil, nil, fmt.Errorf("instance %d of parley serve did not listen within %s: %s", i+1, serveStartTimeout, strings.TrimSpace(in.stderr.String()))
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
	return all, stop, nil
}

// instancesCPU returns the CPU time (user and system) the instances have used so far, in
// microseconds, from /proc/PID/stat; false where that cannot be read (not Linux).
func instancesCPU(all []*instance) (int64, bool) {
	tick := int64(100) // USER_HZ: 100 on every Linux architecture Go supports
	var sum int64
	for _, in := range all {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(in.cmd.Process.Pid) + "/stat")
		if err != nil {
			return 0, false
		}
		us, err := statCPU(string(b))
		if err != nil {
			return 0, false
		}
		sum += us * 1e6 / tick
	}
	return sum, true
}

// statCPU returns utime+stime, in clock ticks, from the text of /proc/PID/stat. The second
// field, the command name in parentheses, may hold spaces, so fields count from its last ')'.
func statCPU(stat string) (int64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("no ')' in /proc/PID/stat")
	}
	f := strings.Fields(stat[i+1:])
	// After ')': state is field 3 of the whole line, utime 14, stime 15.
	if len(f) < 13 {
		return 0, errors.New("short /proc/PID/stat")
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return ut + st, nil
}

// tailBuffer keeps the last max bytes written to it: what a started server said on stderr,
// for the error when it fails to start.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// randomToken is a fresh admin token for the started instances.
func randomToken() string { return rand.Text() }
