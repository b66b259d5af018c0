package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/loadbench"
	"github.com/parleyhq/parley/sqlite"
)

const benchServerDescription = `
Load the room server and measure it. The real server runs in this process on a loopback
listener (127.0.0.1:0): the HTTP handler and room service of 'parley serve', over SQLite (a
new temporary file unless --db names one) or PostgreSQL. Rooms are created with their rate
caps raised out of reach, and --seats seats post --messages unique, valid convention
messages at once (in one room, or spread over --rooms), each one acknowledged (201, durable:
committed with synchronous=FULL on SQLite) before its seat sends the next.

Reported: durable posts per second and post latency percentiles (p50, p95, p99, max) over
the posting phases, and per phase; a full history read of the first room (as a seat, median
of 5) when 1k, 5k and 10k messages are posted and at the end, with its cost per byte
returned, which should stay flat as the room grows (once the room holds more than a page of
1,000 messages, that first page is full and its repeats are served from the page cache); and
memory (heap in use after the run, bytes and allocations per post; the client's side is
included, since it runs in the same process).

Then two more rooms are stored directly (not posted): one of 500 messages on one topic, and
one of --state-messages where the same 500 are on that topic and the rest on others. Reported:
the state record of that topic in each (median of 5), and every full history page of the
large room read twice over HTTP, first from the store, then from the cache of full pages, in
MiB/s.

With --instances N (PostgreSQL only), the bench starts N 'parley serve' processes of this
executable on the database, each on a free loopback port, and spreads the seats over them,
as a load balancer would; it stops them at the end. While they take the posts, this process
is only the client: it opens its own connection to the database after posting. After
posting, every room's seqs are read back and must run 1..N without a gap or a repeat, N the
posts acknowledged in it (checked in every mode; the run fails otherwise). CPU per post is
the bench's own CPU time over the posting phases, plus the started servers' (not
PostgreSQL's), divided by the posts; the bench's own part, the client's, is reported apart
(client_cpu_us_per_post).

Then the floor: the same seats post the same messages through the same client (up to 10,000
of them) to an HTTP server in this process that stores and checks nothing (net/http with the
settings of 'parley serve'; it reads each body and answers 201 with a seq). Its posts per
second, latency and CPU per post are what this machine's loopback and net/http allow at these
seats before any of parley's work, measured in the same run; floor.share is the server's posts
per second over the floor's.

On SQLite, before posting, SQLite's own single-commit floor beside the file: 2,000
transactions of one row each, one after the other, each waiting for its fsync, after 500
untimed (commit_floor_per_second). posts_over_commit_floor is the server's posts per second
over it: above 1, group commit carried more posts than committing each alone could.

On SQLite the store's committer reports what it did over the posting phases (committer):
its commits and posts per commit, the share of the posting time it spent on batches
(busy_share), the share of that in COMMIT, the WAL's writes and fsync (commit_share), and
the mean COMMIT (commit_ms). A busy share near 1 means posts queued behind the committer:
the disk's fsync, not the handlers' CPU, set the pace.

The machine's other load counts: run it more than once and quote the median. --runs N does
that: N whole runs one after the other (each on a new temporary file, or all on --db, each in
rooms of its own), a line for each as it ends, then the median of each figure (ratios: the
median of the runs' ratios). With --json: {"runs": [each run's object], "median": {...}}.`

const benchServerExamples = `  parley bench server
  parley bench server --seats 20 --messages 10000 --json
  parley bench server --seats 20 --rooms 4
  parley bench server --seats 20 --messages 10000 --state-messages 500 --runs 5
  parley bench server --seats 20 --commit-wait 0
  parley bench server --db sqlite:/tmp/load.db --cpuprofile cpu.out && go tool pprof -top cpu.out
  parley bench server --db postgres://postgres@127.0.0.1:5432/parley_bench?sslmode=disable
  parley bench server --db postgres://postgres@127.0.0.1:5432/parley_bench?sslmode=disable --instances 2`

func runBenchServer(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "bench server", "bench server [--db sqlite:PATH|postgres://…] [--seats 20] [--messages N] [--json]",
		benchServerDescription, benchServerExamples)
	db := fs.String("db", "", "database: sqlite:PATH, a bare PATH, or postgres://… (default: a temporary SQLite file)")
	seats := fs.Int("seats", 20, "seats posting at once")
	rooms := fs.Int("rooms", 1, "rooms to spread the seats over (rooms are independent: each has its own seq)")
	instances := fs.Int("instances", 0, "start this many 'parley serve' processes on the --db PostgreSQL database and spread the seats over them (0: serve in this process)")
	messages := fs.Int("messages", 10000, "messages to post in all")
	stateMessages := fs.Int("state-messages", loadbench.DefaultStateMessages, "messages of the large room whose state and history pages are timed (stored directly, not posted)")
	commitWait := fs.Duration("commit-wait", 0, "how long a commit may wait for posts already on their way to it (default: 200µs on SQLite, 6ms on PostgreSQL; 0: never, as before the commit wait; with --instances, the servers')")
	asJSON := fs.Bool("json", false, "print the results as one JSON object")
	runs := fs.Int("runs", 1, "run the whole bench this many times, one after the other, and report each run and the medians")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to `FILE`")
	traceFile := fs.String("trace", "", "write an execution trace of the run to `FILE` (go tool trace FILE; go tool trace -pprof=sched FILE for the time goroutines waited to run)")
	memProfile := fs.String("memprofile", "", "write an allocation profile of the run to `FILE` (go tool pprof -sample_index=alloc_objects)")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageErrorf("unexpected argument %q", rest[0])
	}
	if *seats < 1 || *seats > 1000 {
		return usageErrorf("--seats must be 1..1000, not %d", *seats)
	}
	if *rooms < 1 || *rooms > *seats {
		return usageErrorf("--rooms must be 1..--seats (%d), not %d", *seats, *rooms)
	}
	if *messages < 1 {
		return usageErrorf("--messages must be at least 1, not %d", *messages)
	}
	if *instances < 0 || *instances > 16 {
		return usageErrorf("--instances must be 0..16, not %d", *instances)
	}
	if *instances > *seats {
		return usageErrorf("--instances must be at most --seats (%d), not %d", *seats, *instances)
	}
	if *stateMessages < 500 || *stateMessages > 1000000 {
		return usageErrorf("--state-messages must be 500..1000000, not %d", *stateMessages)
	}
	if *runs < 1 || *runs > 100 {
		return usageErrorf("--runs must be 1..100, not %d", *runs)
	}

	kind, target := "sqlite", ""
	if *db != "" {
		if kind, target, err = parseDB(*db); err != nil {
			return err
		}
	}
	wait, err := commitWaitFlag(fs, *commitWait)
	if err != nil {
		return err
	}
	if *instances > 0 && kind != "postgres" {
		return usageErrorf("--instances needs --db postgres://…: one SQLite file is served by one process, the one this bench runs")
	}
	if *cpuProfile != "" {
		done, err := profileTo(*cpuProfile, pprof.StartCPUProfile, pprof.StopCPUProfile)
		if err != nil {
			return &exitError{code: 1, msg: err.Error()}
		}
		defer done()
	}
	if *traceFile != "" {
		done, err := profileTo(*traceFile, trace.Start, trace.Stop)
		if err != nil {
			return &exitError{code: 1, msg: err.Error()}
		}
		defer done()
	}
	o := benchServerOptions{db: *db, kind: kind, target: target, wait: wait, seats: *seats, rooms: *rooms,
		instances: *instances, messages: *messages, stateMessages: *stateMessages}
	var results []*loadbench.Result
	for i := range *runs {
		res, err := benchServerOnce(ctx, o)
		if err != nil {
			return err
		}
		results = append(results, res)
		if *runs > 1 && !*asJSON {
			fmt.Fprintf(e.stdout, "run %d/%d: %s\n", i+1, *runs, benchServerLine(res))
		}
	}
	res := results[0]
	if *memProfile != "" {
		if err := writeHeapProfile(*memProfile); err != nil {
			return &exitError{code: 1, msg: err.Error()}
		}
	}
	var out any = res
	if len(results) > 1 {
		out = benchServerRuns{Runs: results, Median: medianOf(results)}
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else if len(results) > 1 {
		fmt.Fprint(e.stdout, benchMedianText(results, medianOf(results)))
	} else {
		fmt.Fprint(e.stdout, benchServerText(res))
	}
	for _, r := range results {
		if r.Errors > 0 {
			return &exitError{code: 1, msg: fmt.Sprintf("%d of %d posts failed; the first: %s", r.Errors, r.Messages, r.FirstError)}
		}
	}
	return nil
}

// benchServerOptions are the settings of one run of the bench.
type benchServerOptions struct {
	db, kind, target        string
	wait                    *time.Duration
	seats, rooms, instances int
	messages, stateMessages int
}

// benchServerOnce runs the bench once: on a new temporary SQLite file unless --db names a
// database, which then takes every run (each in rooms of its own).
func benchServerOnce(ctx context.Context, o benchServerOptions) (*loadbench.Result, error) {
	kind, target, wait := o.kind, o.target, o.wait
	if o.db == "" {
		dir, err := os.MkdirTemp("", "parley-bench-")
		if err != nil {
			return nil, &exitError{code: 1, msg: err.Error()}
		}
		defer os.RemoveAll(dir)
		target = filepath.Join(dir, "bench.db")
	}
	if kind == "sqlite" {
		// As 'parley serve' does: the file's only writer, whose store may keep seats.
		unlock, err := lockDB(target)
		if err != nil {
			return nil, &exitError{code: 1, msg: err.Error()}
		}
		defer unlock()
	}
	store, err := openStoreLogged(ctx, kind, target, slog.Default(), kind == "sqlite", wait)
	if err != nil {
		return nil, &exitError{code: 1, msg: err.Error()}
	}
	if o.instances > 0 {
		// Opened to check the database and bring its schema up to date before the servers
		// start; reopened by the bench once posting is over (Config.OpenStore), so that this
		// process, the client, does not hear every post's NOTIFY while the servers take them.
		store.Close()
		store = nil
	} else {
		defer store.Close()
	}

	cfg := loadbench.Config{Store: store, StoreKey: kind, Seats: o.seats, Rooms: o.rooms, Messages: o.messages, StateMessages: o.stateMessages}
	if kind == "sqlite" {
		cfg.CommitFloor = func(ctx context.Context) (float64, error) {
			return sqlite.CommitFloor(ctx, filepath.Dir(target), commitFloorCommits, commitFloorBytes)
		}
	}
	if o.instances > 0 {
		cfg.AdminToken = randomToken()
		var extra []string
		if wait != nil {
			extra = []string{"--commit-wait", wait.String()}
		}
		all, stop, err := startInstances(ctx, o.instances, target, cfg.AdminToken, extra...)
		if err != nil {
			return nil, &exitError{code: 1, msg: err.Error()}
		}
		defer stop()
		for _, in := range all {
			cfg.Servers = append(cfg.Servers, in.url)
		}
		cfg.ServerCPU = func() (int64, bool) { return instancesCPU(all) }
		cfg.OpenStore = func(ctx context.Context) (parley.Store, error) {
			return openStoreLogged(ctx, kind, target, slog.Default(), false, wait)
		}
	}
	res, err := loadbench.Run(ctx, cfg)
	if err != nil {
		return nil, &exitError{code: 1, msg: err.Error()}
	}
	return res, nil
}

// writeHeapProfile writes the allocations made so far (every one since the start, sampled)
// to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// The single-commit floor of a SQLite run: commits of one row of about a bench post's size.
const (
	commitFloorCommits = 2000
	commitFloorBytes   = 200
)

func benchServerText(r *loadbench.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "parley bench server: %s, %d seats in %s, %d messages, GOMAXPROCS %d", r.Store, r.Seats, plural(r.Rooms, "room", "rooms"), r.Messages, r.GOMAXPROCS)
	if r.Instances > 0 {
		fmt.Fprintf(&b, ", %s", plural(r.Instances, "'parley serve' process", "'parley serve' processes"))
	}
	b.WriteString("\n\n")
	fmt.Fprintf(&b, "posts      %.0f/s durable (%.2fs posting, %d errors)\n", r.PostsPerSecond, r.PostSeconds, r.Errors)
	for _, ph := range r.Phases {
		fmt.Fprintf(&b, "           %.0f/s from %d to %d messages\n", ph.PostsPerSecond, ph.From, ph.To)
	}
	fmt.Fprintf(&b, "latency    p50 %.1f ms  p95 %.1f ms  p99 %.1f ms  max %.1f ms\n", r.LatencyMS.P50, r.LatencyMS.P95, r.LatencyMS.P99, r.LatencyMS.Max)
	fmt.Fprintf(&b, "seqs       %s: every room's seqs run 1..N without a gap, N the posts acknowledged\n", r.SeqCheck)
	who := "this process: server and client"
	if r.Instances > 0 {
		who = "the client here; the servers run apart"
	}
	fmt.Fprintf(&b, "memory     heap in use %.1f MiB; %.0f bytes and %.0f allocations per post; %d GCs (%s)\n",
		r.Memory.HeapInUseMB, r.Memory.TotalAllocPerPost, r.Memory.MallocsPerPost, r.Memory.NumGC, who)
	if r.Memory.CPUMicrosPerPost > 0 {
		who = "this process: server and client"
		if r.Instances > 0 {
			who = "the servers and the client; not PostgreSQL's"
		}
		fmt.Fprintf(&b, "cpu        %.0f µs per post (%s)\n", r.Memory.CPUMicrosPerPost, who)
		if r.Memory.ClientCPUMicrosPerPost > 0 {
			fmt.Fprintf(&b, "           %.0f µs of it the client's (this process: the seats' posting)\n", r.Memory.ClientCPUMicrosPerPost)
		}
	}
	if r.CommitFloor > 0 {
		fmt.Fprintf(&b, "commits    %.0f/s: SQLite's single-commit floor beside the file (%d commits of one row, one\n", r.CommitFloor, commitFloorCommits)
		fmt.Fprintf(&b, "           after the other, each waiting for its fsync); the server's durable posts are %.2f× it\n", r.PostsOverCommitFloor)
	}
	if c := r.Committer; c != nil {
		fmt.Fprintf(&b, "committer  %d commits of %.1f posts; busy %.0f%% of the posting time, %.0f%% of that in COMMIT\n",
			c.Commits, c.PostsPerCommit, 100*c.BusyShare, 100*c.CommitShare)
		fmt.Fprintf(&b, "           (the WAL's writes and fsync, %.2f ms each): near 100%% busy, the commits set the pace\n", c.CommitMS)
	}
	if f := r.Floor; f != nil {
		fmt.Fprintf(&b, "floor      %.0f/s, p50 %.1f ms, p99 %.1f ms, %.0f µs CPU per post: the same seats and client posting\n",
			f.PostsPerSecond, f.LatencyMS.P50, f.LatencyMS.P99, f.CPUMicrosPerPost)
		fmt.Fprintf(&b, "           %d messages to an HTTP server in this process that stores and checks nothing;\n", f.Posts)
		fmt.Fprintf(&b, "           the server reached %.0f%% of it\n", 100*f.Share)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "history read of\tbytes\tms\tns/byte\tMiB/s\t")
	for _, rc := range r.Reads {
		fmt.Fprintf(tw, "%d msgs\t%d\t%.1f\t%.1f\t%.1f\t\n", rc.Messages, rc.Bytes, rc.MS, rc.NSPerByte, rc.BytesPerSecMB)
	}
	tw.Flush()
	fmt.Fprintf(&b, "\nhistory pages  %d full pages of %d messages: %.1f MiB/s from the store, %.1f MiB/s cached\n",
		r.HistoryPages, 1000, r.HistoryColdMBPerS, r.HistoryCachedMBPerS)
	fmt.Fprintf(&b, "state          one topic of 500 messages: %.1f ms in a room of 500, %.1f ms in a room of %d\n",
		r.StateMSSmallRoom, r.StateMSLargeRoom, r.StateRoomMessages)
	return b.String()
}
