package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parleyhq/parley/internal/pgtest"
	"github.com/parleyhq/parley/loadbench"
)

// TestBenchServer runs a small load on a SQLite file and checks that every post was
// acknowledged and that each figure is there and plausible.
func TestBenchServer(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "load.db")
	code, out, errOut := benchCLI(t, "bench", "server", "--db", db, "--seats", "4", "--messages", "120", "--state-messages", "2000", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	checkLoad(t, out, "sqlite", 4, 120)

	// With the committer never holding a batch (as before the commit wait): the same posts, seqs gapless.
	code, out, errOut = benchCLI(t, "bench", "server", "--seats", "8", "--messages", "400", "--state-messages", "2000", "--commit-wait", "0", "--json")
	if code != 0 {
		t.Fatalf("--commit-wait: exit %d\n%s\n%s", code, out, errOut)
	}
	checkLoad(t, out, "sqlite", 8, 400)

	code, out, _ = benchCLI(t, "bench", "server", "--seats", "4", "--rooms", "2", "--messages", "20", "--state-messages", "500")
	if code != 0 || !strings.Contains(out, "4 seats in 2 rooms") || !strings.Contains(out, "history read of") || !strings.Contains(out, " msgs ") ||
		!strings.Contains(out, "in a room of 500") || !strings.Contains(out, "20 messages to an HTTP server in this process that stores and checks nothing") ||
		!strings.Contains(out, "single-commit floor beside the file (2000 commits of one row") {
		t.Errorf("text output (exit %d):\n%s", code, out)
	}
}

func TestBenchServerPostgres(t *testing.T) {
	dsn := pgtest.DSN(t)
	code, out, errOut := benchCLI(t, "bench", "server", "--db", dsn, "--seats", "4", "--messages", "60", "--state-messages", "2000", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	checkLoad(t, out, "postgres", 4, 60)
}

// TestBenchServerInstances has two real 'parley serve' processes (this command, built) take
// the posts on one PostgreSQL database, and checks that every post landed, the seqs were
// found gapless, and the servers' CPU was counted.
func TestBenchServerInstances(t *testing.T) {
	dsn := pgtest.DSN(t)
	serveBinary = buildParley(t, t.TempDir())
	t.Cleanup(func() { serveBinary = "" })
	code, out, errOut := benchCLI(t, "bench", "server", "--db", dsn, "--instances", "2", "--seats", "4", "--messages", "60", "--state-messages", "2000", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	checkLoad(t, out, "postgres", 4, 60)
	var r loadbench.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Instances != 2 || r.Memory.CPUMicrosPerPost <= 0 {
		t.Errorf("instances %d, CPU %.0f µs per post", r.Instances, r.Memory.CPUMicrosPerPost)
	}
	// The client's part (this process's) is there, and the servers' makes up the rest.
	if c := r.Memory.ClientCPUMicrosPerPost; c <= 0 || c >= r.Memory.CPUMicrosPerPost {
		t.Errorf("the client's CPU %.1f µs per post, of %.1f in all", c, r.Memory.CPUMicrosPerPost)
	}
	text := benchServerText(&r)
	if want := fmt.Sprintf("%.0f µs of it the client's", r.Memory.ClientCPUMicrosPerPost); !strings.Contains(text, want) {
		t.Errorf("the text lacks %q:\n%s", want, text)
	}
}

func TestStatCPU(t *testing.T) {
	// A command name with spaces and a ')' of its own; utime 1234, stime 56.
	line := "4242 (my (odd) cmd) S 1 4242 4242 0 -1 4194304 100 0 0 0 1234 56 0 0 20 0 1 0 99 1000 10"
	if got, err := statCPU(line); err != nil || got != 1290 {
		t.Errorf("statCPU = %d, %v; want 1290", got, err)
	}
	if _, err := statCPU("4242 (cmd) S 1"); err == nil {
		t.Error("a short line was read")
	}
}

func checkLoad(t *testing.T, out, store string, seats, messages int) {
	t.Helper()
	var r loadbench.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if r.Store != store || r.Seats != seats || r.Messages != messages || r.Errors != 0 || r.SeqCheck != "ok" {
		t.Errorf("header %+v", r)
	}
	if r.PostsPerSecond <= 0 || r.LatencyMS.P50 <= 0 || r.LatencyMS.P50 > r.LatencyMS.P99 || r.LatencyMS.P99 > r.LatencyMS.Max {
		t.Errorf("posting figures %+v %+v", r.PostsPerSecond, r.LatencyMS)
	}
	if len(r.Reads) != 1 || r.Reads[0].Messages != messages || r.Reads[0].Bytes < messages*100 || r.Reads[0].NSPerByte <= 0 {
		t.Errorf("reads %+v", r.Reads)
	}
	if r.Memory.TotalAllocPerPost <= 0 || r.Memory.HeapInUseMB <= 0 {
		t.Errorf("memory %+v", r.Memory)
	}
	if r.Instances == 0 && r.Memory.ClientCPUMicrosPerPost != 0 {
		t.Errorf("a client's CPU of %.1f µs per post, apart from the server's in the same process", r.Memory.ClientCPUMicrosPerPost)
	}
	// Two full pages of the 2,000-message state room, cold and cached; the state of one topic
	// in both state rooms.
	if r.HistoryPages != 2 || r.HistoryColdMBPerS <= 0 || r.HistoryCachedMBPerS <= r.HistoryColdMBPerS {
		t.Errorf("history pages %d: cold %.1f MiB/s, cached %.1f MiB/s", r.HistoryPages, r.HistoryColdMBPerS, r.HistoryCachedMBPerS)
	}
	if r.StateRoomMessages != 2000 || r.StateMSSmallRoom <= 0 || r.StateMSLargeRoom <= 0 {
		t.Errorf("state: %d messages, %.1f ms small, %.1f ms large", r.StateRoomMessages, r.StateMSSmallRoom, r.StateMSLargeRoom)
	}
	// SQLite's single-commit floor, and the posts over it worked out again; none on PostgreSQL.
	if store == "sqlite" && (r.CommitFloor <= 0 || math.Abs(r.PostsOverCommitFloor-r.PostsPerSecond/r.CommitFloor) > 1e-9*r.PostsOverCommitFloor) ||
		store != "sqlite" && (r.CommitFloor != 0 || r.PostsOverCommitFloor != 0) {
		t.Errorf("%s: commit floor %.1f/s, posts over it %.3f (posts per second %.1f)", store, r.CommitFloor, r.PostsOverCommitFloor, r.PostsPerSecond)
	}
	// SQLite's committer: every acknowledged post is a write it committed (the counters a few
	// more), no commit without one, its COMMIT time inside its busy time, and that inside the
	// posting time (give or take a batch that began before a phase). PostgreSQL reports none.
	if c := r.Committer; store == "sqlite" && (c == nil || c.Commits < 1 || c.PostsPerCommit < 1 ||
		float64(c.Commits)*c.PostsPerCommit < float64(messages)-0.5 || c.CommitMS <= 0 ||
		c.BusyShare <= 0 || c.BusyShare > 1.25 || c.CommitShare <= 0 || c.CommitShare > 1) ||
		store != "sqlite" && c != nil {
		t.Errorf("%s: committer %+v (%d messages)", store, c, messages)
	}
	// The floor: as many posts as the run (under 10,000), and the share worked out again.
	if f := r.Floor; f == nil || f.Posts != messages || f.PostsPerSecond <= 0 || f.LatencyMS.P50 <= 0 ||
		math.Abs(f.Share-r.PostsPerSecond/f.PostsPerSecond) > 1e-9*f.Share {
		t.Errorf("floor %+v (posts per second %.1f)", f, r.PostsPerSecond)
	}
}

func TestBenchServerUsage(t *testing.T) {
	for _, args := range [][]string{{"--seats", "0"}, {"--messages", "-1"}, {"--seats", "2", "--rooms", "3"}, {"--state-messages", "499"}, {"--db", "mysql://x"}, {"extra"}, {"--instances", "2"}, {"--instances", "-1"},
		{"--commit-wait", "-1ms"}, {"--commit-wait", "1s"}, {"--runs", "0"}, {"--runs", "101"}} {
		if code, _, errOut := benchCLI(t, append([]string{"bench", "server"}, args...)...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errOut)
		}
	}
}

// TestBenchServerRuns runs the bench three times (--runs 3): each run is checked as a run of
// its own, and the medians against the middle value of each figure sorted here. Then twice on
// one named file, in text: a line per run as it ends, then the medians.
func TestBenchServerRuns(t *testing.T) {
	code, out, errOut := benchCLI(t, "bench", "server", "--runs", "3", "--seats", "4", "--messages", "60", "--state-messages", "2000", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var got struct {
		Runs   []json.RawMessage
		Median benchMedian
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Runs) != 3 || got.Median.Runs != 3 {
		t.Fatalf("%d runs, median of %d (%v):\n%s", len(got.Runs), got.Median.Runs, err, out)
	}
	runs := make([]loadbench.Result, 3)
	for i, raw := range got.Runs {
		checkLoad(t, string(raw), "sqlite", 4, 60)
		if err := json.Unmarshal(raw, &runs[i]); err != nil {
			t.Fatal(err)
		}
	}
	middle := func(f func(r loadbench.Result) float64) float64 {
		xs := []float64{f(runs[0]), f(runs[1]), f(runs[2])}
		for i := range xs {
			for j := i + 1; j < len(xs); j++ {
				if xs[j] < xs[i] {
					xs[i], xs[j] = xs[j], xs[i]
				}
			}
		}
		return xs[1]
	}
	m := got.Median
	for _, c := range []struct {
		name string
		got  float64
		f    func(r loadbench.Result) float64
	}{
		{"posts per second", m.PostsPerSecond, func(r loadbench.Result) float64 { return r.PostsPerSecond }},
		{"p50", m.LatencyMS.P50, func(r loadbench.Result) float64 { return r.LatencyMS.P50 }},
		{"p99", m.LatencyMS.P99, func(r loadbench.Result) float64 { return r.LatencyMS.P99 }},
		{"allocations per post", m.MallocsPerPost, func(r loadbench.Result) float64 { return r.Memory.MallocsPerPost }},
		{"posts over the commit floor", m.PostsOverCommitFloor, func(r loadbench.Result) float64 { return r.PostsOverCommitFloor }},
		{"floor share", m.FloorShare, func(r loadbench.Result) float64 { return r.Floor.Share }},
		{"COMMIT ms", m.Committer.CommitMS, func(r loadbench.Result) float64 { return r.Committer.CommitMS }},
		{"busy share", m.Committer.BusyShare, func(r loadbench.Result) float64 { return r.Committer.BusyShare }},
	} {
		if want := middle(c.f); c.got != want {
			t.Errorf("median %s = %v, want %v", c.name, c.got, want)
		}
	}
	lo := min(runs[0].PostsPerSecond, runs[1].PostsPerSecond, runs[2].PostsPerSecond)
	hi := max(runs[0].PostsPerSecond, runs[1].PostsPerSecond, runs[2].PostsPerSecond)
	if m.PostsPerSecondMin != lo || m.PostsPerSecondMax != hi {
		t.Errorf("posts per second %v–%v, want %v–%v", m.PostsPerSecondMin, m.PostsPerSecondMax, lo, hi)
	}

	db := "sqlite:" + filepath.Join(t.TempDir(), "runs.db")
	code, out, errOut = benchCLI(t, "bench", "server", "--db", db, "--runs", "2", "--seats", "2", "--messages", "30", "--state-messages", "500")
	if code != 0 || !strings.Contains(out, "run 1/2: ") || !strings.Contains(out, "run 2/2: ") || !strings.Contains(out, "2 seats in 1 room, 30 messages") || !strings.Contains(out, "medians of 2 runs") ||
		!strings.Contains(out, "committer  ") || strings.Count(out, "posts/s") != 2 {
		t.Errorf("--runs 2 on one file, text (exit %d):\n%s\n%s", code, out, errOut)
	}
}

// TestBenchServerProfiles checks that --cpuprofile and --trace each write their file: a
// profile (gzip) and an execution trace (its "go 1.N trace" header), both over the run.
func TestBenchServerProfiles(t *testing.T) {
	dir := t.TempDir()
	cpu, tr := filepath.Join(dir, "cpu.out"), filepath.Join(dir, "trace.out")
	code, out, errOut := benchCLI(t, "bench", "server", "--seats", "2", "--messages", "40", "--state-messages", "500",
		"--cpuprofile", cpu, "--trace", tr)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if b, err := os.ReadFile(cpu); err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("--cpuprofile: not a gzip profile (%d bytes, err %v)", len(b), err)
	}
	b, err := os.ReadFile(tr)
	if err != nil || !bytes.HasPrefix(b, []byte("go 1.")) || !bytes.Contains(b[:min(len(b), 16)], []byte(" trace")) || len(b) < 1000 {
		t.Errorf("--trace: not an execution trace (%d bytes, err %v, head %q)", len(b), err, b[:min(len(b), 16)])
	}
}
