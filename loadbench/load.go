package loadbench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/client"
	phttp "github.com/parleyhq/parley/http"
	"github.com/parleyhq/parley/room"
)

// Config configures Run.
type Config struct {
	Store parley.Store // the store under test, opened (and closed) by the caller
	// OpenStore, with Servers and no Store, opens the store once posting is over, for the seq
	// check and the state rooms; Run closes it. The servers take every post, and a store
	// open here meanwhile would only cost this process CPU that counts in the figures: a
	// PostgreSQL store listens for every append (a NOTIFY each post), and would hear them
	// on a third LISTEN connection besides the servers'.
	OpenStore func(context.Context) (parley.Store, error)
	StoreKey  string // names the store in the results ("sqlite", "postgres")
	Seats     int    // seats posting at once; 0 = 20
	// Rooms spreads the seats over this many rooms, round robin; 0 = 1. Rooms are
	// independent (each has its own seq), so this shows how far the store scales with them.
	Rooms    int
	Messages int // posts in all; 0 = 10000
	// ReadAt lists room sizes at which posting pauses to time a full history read; nil =
	// 1000, 5000 and 10000 (those not above Messages; Messages itself is always one).
	ReadAt []int
	// Reads is how many times each history read is repeated (the median is reported); 0 = 5.
	Reads int
	// StateMessages is the size of the large room whose state record and history pages are
	// timed (server_reads.go); 0 = DefaultStateMessages. At least 500.
	StateMessages int
	// Servers, when set, are the base URLs of running servers (`parley serve` processes on
	// Store's database, with AdminToken as their admin token) that the seats post to instead
	// of a server in this process: seat i posts to Servers[i % len(Servers)], and the reads
	// go to the first. The state rooms are still built through a service in this process on
	// Store.
	Servers    []string
	AdminToken string
	// ServerCPU, when set, returns the CPU time the servers of Servers have used so far, in
	// microseconds; it is added to this process's for the CPU per post.
	ServerCPU func() (int64, bool)
	// CommitFloor, when set, measures the store's single-commit floor (commits per second of
	// one row each, one after the other) before posting: sqlite.CommitFloor beside the file.
	CommitFloor func(context.Context) (float64, error)
}

// Result is what Run measured. Durations are in milliseconds.
type Result struct {
	Store          string      `json:"store"`
	Seats          int         `json:"seats"`
	Rooms          int         `json:"rooms"`
	Messages       int         `json:"messages"`
	Errors         int         `json:"errors"`
	FirstError     string      `json:"first_error,omitempty"`
	PostSeconds    float64     `json:"post_seconds"` // wall time spent posting, reads excluded
	PostsPerSecond float64     `json:"posts_per_second"`
	LatencyMS      Percentiles `json:"post_latency_ms"`
	Phases         []PostPhase `json:"phases"` // posting between two reads: does speed depend on room size?
	Reads          []ReadCost  `json:"reads"`
	Memory         MemoryUse   `json:"memory"`
	GOMAXPROCS     int         `json:"gomaxprocs"`
	// Instances is how many server processes took the posts (0: the server ran in this
	// process).
	Instances int `json:"instances,omitempty"`
	// SeqCheck is the check made after posting that every room's seqs run 1..N without a
	// gap or a repeat and N is the posts acknowledged in it: "ok" (the run fails otherwise).
	SeqCheck string `json:"seq_check"`
	// Floor is the same posting to an HTTP server that stores and checks nothing (Floor),
	// measured after the posting phases.
	Floor *Floor `json:"floor"`
	// CommitFloor is the store's single-commit floor (Config.CommitFloor), and
	// PostsOverCommitFloor the posts per second over it: above 1, group commit carried more
	// posts than committing each alone could. Absent without Config.CommitFloor.
	CommitFloor          float64 `json:"commit_floor_per_second,omitempty"`
	PostsOverCommitFloor float64 `json:"posts_over_commit_floor,omitempty"`
	// Committer is what the store's group commit did over the posting phases, when the
	// store reports it (parley.CommitStatser: SQLite, serving in this process).
	Committer *Committer `json:"committer,omitempty"`

	// History pages of the large state room (StateMessages messages, every full page of
	// 1,000), over HTTP as a seat: read from the store the first time (cold), then again,
	// served from the cache of full pages (cached, the median of Reads passes). In MiB/s.
	HistoryPages        int     `json:"history_pages"`
	HistoryColdMBPerS   float64 `json:"history_cold_mb_per_s"`
	HistoryCachedMBPerS float64 `json:"history_cached_mb_per_s"`
	// State of one topic (RoomService.State, median of Reads), in a room of 500 messages all
	// on it and in one of StateMessages messages where the same 500 are on it and the rest
	// on other topics.
	StateRoomMessages int     `json:"state_room_messages"`
	StateMSSmallRoom  float64 `json:"state_ms_small_room"`
	StateMSLargeRoom  float64 `json:"state_ms_large_room"`
}

// Committer is the store's group commit over the posting phases. A busy share near 1 means
// the committer never waited for work: posts queued behind it, and its commits (their fsync
// above all, commit_share of its time) set the pace, not the CPU of the handlers.
type Committer struct {
	Commits        int64   `json:"commits"`          // transactions committed
	PostsPerCommit float64 `json:"posts_per_commit"` // writes they carried, per commit
	BusyShare      float64 `json:"busy_share"`       // of the posting time, on batches
	CommitShare    float64 `json:"commit_share"`     // of that busy time, in COMMIT
	CommitMS       float64 `json:"commit_ms"`        // mean time of one COMMIT (WAL writes and fsync)
}

// committerUse works out Committer from the stats summed over the phases (d) and the time
// spent posting.
func committerUse(d parley.CommitStats, posting time.Duration) *Committer {
	c := &Committer{Commits: d.Commits}
	if d.Commits > 0 {
		c.PostsPerCommit = float64(d.Writes) / float64(d.Commits)
		c.CommitMS = float64(d.Commit) / float64(time.Millisecond) / float64(d.Commits)
	}
	if posting > 0 {
		c.BusyShare = float64(d.Busy) / float64(posting)
	}
	if d.Busy > 0 {
		c.CommitShare = float64(d.Commit) / float64(d.Busy)
	}
	return c
}

// Percentiles of a latency distribution, in milliseconds.
type Percentiles struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// PostPhase is the posting between two history reads.
type PostPhase struct {
	From, To       int     // room size before and after
	PostsPerSecond float64 `json:"posts_per_second"`
}

// ReadCost is one full history read (GET …/history, as a seat) of the first room, at a
// size.
type ReadCost struct {
	Messages      int     `json:"messages"`
	Bytes         int     `json:"bytes"`
	MS            float64 `json:"ms"` // median of the repeats
	NSPerByte     float64 `json:"ns_per_byte"`
	BytesPerSecMB float64 `json:"mb_per_s"`
}

// MemoryUse is runtime.MemStats read around the posting phases. The client runs in the same
// process, so allocations include its side of each request (small next to the server's).
type MemoryUse struct {
	HeapInUseMB       float64 `json:"heap_in_use_mb"` // after the run, after a GC
	TotalAllocPerPost float64 `json:"total_alloc_per_post_bytes"`
	MallocsPerPost    float64 `json:"mallocs_per_post"`
	NumGC             uint32  `json:"num_gc"`
	// CPUMicrosPerPost is the process's CPU time (user and system, every thread) over the
	// posting phases divided by the posts: server and client together, since both run here.
	// Unlike posts per second it hardly moves when other processes share the cores. 0 where
	// the system does not report it.
	CPUMicrosPerPost float64 `json:"cpu_us_per_post"`
	// ClientCPUMicrosPerPost is this process's part of CPUMicrosPerPost when the servers run
	// apart (Config.Servers): the client's cost, the seats' posting. 0 otherwise, where the
	// client and the server share the process and its CPU time.
	ClientCPUMicrosPerPost float64 `json:"client_cpu_us_per_post,omitempty"`
}

// Run serves the real room service on cfg.Store through the real HTTP handler on a
// loopback listener, creates a room with its caps raised out of reach and cfg.Seats seats,
// and has the seats post cfg.Messages unique, valid convention messages at once, each
// acknowledged durably (201) before the seat sends its next. It pauses at each ReadAt size to
// time full history reads.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Store == nil && (cfg.OpenStore == nil || len(cfg.Servers) == 0) {
		return nil, errors.New("server load: no store")
	}
	if cfg.Seats <= 0 {
		cfg.Seats = 20
	}
	cfg.Rooms = min(max(cfg.Rooms, 1), cfg.Seats)
	if cfg.Messages <= 0 {
		cfg.Messages = 10000
	}
	if cfg.Reads <= 0 {
		cfg.Reads = 5
	}
	if cfg.StateMessages <= 0 {
		cfg.StateMessages = DefaultStateMessages
	}
	if cfg.StateMessages < stateOnTopic {
		return nil, fmt.Errorf("server load: the large state room needs at least %d messages, not %d", stateOnTopic, cfg.StateMessages)
	}
	if cfg.ReadAt == nil {
		cfg.ReadAt = []int{1000, 5000, 10000}
	}
	var stops []int
	for _, n := range cfg.ReadAt {
		if n > 0 && n < cfg.Messages {
			stops = append(stops, n)
		}
	}
	slices.Sort(stops)
	stops = append(slices.Compact(stops), cfg.Messages)

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	admin := cfg.AdminToken
	if admin == "" {
		admin = randomHex(24)
	}
	urls := cfg.Servers
	var (
		svc *room.Service // the room service of this process, on cfg.Store
		err error
	)
	if len(urls) == 0 {
		if svc, err = room.New(cfg.Store, room.Config{AdminToken: admin, Logger: log}); err != nil {
			return nil, err
		}
		base, stop, err := serveLoopback(phttp.NewServer(svc, phttp.WithLogger(log), phttp.WithRenderer(room.Renderer{})), log)
		if err != nil {
			return nil, fmt.Errorf("server load: %w", err)
		}
		defer stop()
		urls = []string{base}
	}
	clients := make([]*client.Client, len(urls)) // the admin's, one per server
	hcs := make([]*http.Client, len(urls))
	for i, u := range urls {
		hcs[i] = &http.Client{Timeout: time.Minute, Transport: &http.Transport{
			MaxIdleConns: cfg.Seats * 2, MaxIdleConnsPerHost: cfg.Seats * 2,
		}}
		clients[i], err = client.New(u, admin, client.WithHTTPClient(hcs[i]))
		if err != nil {
			return nil, fmt.Errorf("server load: %w", err)
		}
	}
	c := clients[0]
	// Fresh names, so that a shared PostgreSQL database can be benchmarked more than once.
	prefix := "bench-" + randomHex(4)
	rooms := make([]string, cfg.Rooms)
	policy := map[string]any{
		"seat_messages_per_minute": 1e9, "seat_burst": 1 << 30, "seat_tokens_per_minute": 1 << 40,
		"room_messages_per_minute": 1e9, "room_burst": 1 << 30,
	}
	for r := range rooms {
		rooms[r] = fmt.Sprintf("%s-%d", prefix, r)
		if _, err := c.CreateRoomJSON(ctx, nil, rooms[r], mustJSON(policy)); err != nil {
			return nil, fmt.Errorf("server load: create room: %w", err)
		}
	}
	roomOf := func(seat int) string { return rooms[seat%len(rooms)] }
	seats := make([]string, cfg.Seats)
	as := make([]*client.Client, cfg.Seats) // a client of each seat's token
	posters := make([]*poster, cfg.Seats)   // and its poster, for the posting phases
	for i := range seats {
		seats[i] = fmt.Sprintf("s%02d", i)
		_, token, err := c.AddSeat(ctx, nil, roomOf(i), seats[i], parley.RoleAgent)
		if err != nil {
			return nil, fmt.Errorf("server load: add seat: %w", err)
		}
		as[i] = clients[i%len(clients)].WithToken(token)
		if posters[i], err = newPoster(urls[i%len(urls)], roomOf(i), token); err != nil {
			return nil, fmt.Errorf("server load: %w", err)
		}
		defer posters[i].Close()
	}

	res := &Result{Store: cfg.StoreKey, Seats: cfg.Seats, Rooms: cfg.Rooms, Messages: cfg.Messages, GOMAXPROCS: runtime.GOMAXPROCS(0)}
	if len(cfg.Servers) > 0 {
		res.Instances = len(cfg.Servers)
	}
	// cpuNow returns the CPU time used so far by this process and the servers of cfg.Servers
	// together, and by this process alone.
	cpuNow := func() (all, own int64, ok bool) {
		own, ok = processCPU()
		all = own
		if cfg.ServerCPU != nil {
			sus, sok := cfg.ServerCPU()
			all, ok = all+sus, ok && sok
		}
		return all, own, ok
	}
	posted := make([]int, len(rooms)) // acknowledged posts per room
	latencies := make([]time.Duration, 0, cfg.Messages)
	var (
		mu       sync.Mutex
		errCount atomic.Int64
		postTime time.Duration
		allocs   uint64
		mallocs  uint64
		cpuUS    int64
		ownCPUUS int64 // this process's part of cpuUS
		cpuOK    = true
		// next is the index of the next message to post; the seats of a phase take it until
		// it reaches the phase's stop, and it is set back to the stop after the phase.
		next atomic.Int64
		// commits sums the committer's stats over the phases, when the store reports them.
		commits    parley.CommitStats
		statser, _ = cfg.Store.(parley.CommitStatser)
	)
	// The single-commit floor first, while the store is idle, on the same disk.
	if cfg.CommitFloor != nil {
		if res.CommitFloor, err = cfg.CommitFloor(ctx); err != nil {
			return nil, fmt.Errorf("server load: %w", err)
		}
	}
	// Each seat addresses the next seat of its room, or all.
	to := make([]string, len(seats))
	for s := range seats {
		to[s] = "all"
		if s+len(rooms) < len(seats) {
			to[s] = seats[s+len(rooms)]
		}
	}
	for _, stop := range stops {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		cpu0, own0, ok0 := cpuNow()
		var cs0 parley.CommitStats
		if statser != nil {
			cs0 = statser.CommitStats()
		}
		start := time.Now()
		from := int(next.Load())
		// What the admin client's timeout is to one request, for the phase: a generous
		// bound, so that a server that stops answering ends the run.
		pctx, cancel := context.WithTimeout(ctx, time.Minute+time.Duration(stop-from)*100*time.Millisecond)
		lat, acked := postPhase(pctx, posters, seats, to, &next, stop, func(err error) {
			if errCount.Add(1) == 1 {
				mu.Lock()
				res.FirstError = err.Error()
				mu.Unlock()
			}
		})
		took := time.Since(start)
		if statser != nil {
			commits = commits.Plus(statser.CommitStats().Since(cs0))
		}
		latencies = append(latencies, lat...)
		for s, n := range acked {
			posted[s%len(rooms)] += n
		}
		perr := pctx.Err()
		cancel()
		cpu1, own1, ok1 := cpuNow()
		cpuUS += cpu1 - cpu0
		ownCPUUS += own1 - own0
		cpuOK = cpuOK && ok0 && ok1
		postTime += took
		next.Store(int64(stop)) // each seat took one past the stop on its way out
		res.Phases = append(res.Phases, PostPhase{From: from, To: stop, PostsPerSecond: float64(stop-from) / took.Seconds()})
		runtime.ReadMemStats(&after)
		allocs += after.TotalAlloc - before.TotalAlloc
		mallocs += after.Mallocs - before.Mallocs
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if perr != nil {
			return nil, fmt.Errorf("server load: posting %d messages took more than %s: %w (first error: %s)", stop-from, took.Round(time.Second), perr, res.FirstError)
		}

		rc, err := timeRead(ctx, as[0], rooms[0], cfg.Reads)
		if err != nil {
			return nil, fmt.Errorf("server load: read at %d: %w", stop, err)
		}
		res.Reads = append(res.Reads, rc)
	}

	res.Errors = int(errCount.Load())
	res.PostSeconds = postTime.Seconds()
	res.PostsPerSecond = float64(cfg.Messages) / postTime.Seconds()
	res.LatencyMS = percentiles(latencies)
	if statser != nil {
		res.Committer = committerUse(commits, postTime)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	res.Memory = MemoryUse{
		HeapInUseMB:       float64(ms.HeapInuse) / (1 << 20),
		TotalAllocPerPost: float64(allocs) / float64(cfg.Messages),
		MallocsPerPost:    float64(mallocs) / float64(cfg.Messages),
		NumGC:             ms.NumGC,
	}
	if cpuOK {
		res.Memory.CPUMicrosPerPost = float64(cpuUS) / float64(cfg.Messages)
		if len(cfg.Servers) > 0 {
			res.Memory.ClientCPUMicrosPerPost = float64(ownCPUUS) / float64(cfg.Messages)
		}
	}

	if cfg.Store == nil {
		if cfg.Store, err = cfg.OpenStore(ctx); err != nil {
			return nil, fmt.Errorf("server load: open the store after posting: %w", err)
		}
		defer cfg.Store.Close()
	}
	if svc == nil {
		if svc, err = room.New(cfg.Store, room.Config{AdminToken: admin, Logger: log}); err != nil {
			return nil, err
		}
	}
	for r, name := range rooms {
		if err := checkSeqs(ctx, cfg.Store, name, posted[r]); err != nil {
			return nil, fmt.Errorf("server load: %w", err)
		}
	}
	res.SeqCheck = "ok"
	if res.Floor, err = runFloor(ctx, seats, to, rooms, min(cfg.Messages, floorPosts)); err != nil {
		return nil, fmt.Errorf("server load: %w", err)
	}
	res.Floor.Share = res.PostsPerSecond / res.Floor.PostsPerSecond
	if cfg.CommitFloor != nil {
		res.PostsOverCommitFloor = res.PostsPerSecond / res.CommitFloor
	}

	// The read figures, after the memory ones, which are about posting.
	adminCaller, err := svc.Authenticate(ctx, admin)
	if err != nil {
		return nil, err
	}
	sr, err := buildStateRooms(ctx, cfg.Store, svc, adminCaller, prefix, cfg.StateMessages)
	if err != nil {
		return nil, fmt.Errorf("server load: state rooms: %w", err)
	}
	res.StateRoomMessages = cfg.StateMessages
	if res.StateMSSmallRoom, err = timeState(ctx, svc, sr.smallSeat, sr.small, cfg.Reads); err != nil {
		return nil, fmt.Errorf("server load: %w", err)
	}
	if res.StateMSLargeRoom, err = timeState(ctx, svc, sr.seat, sr.large, cfg.Reads); err != nil {
		return nil, fmt.Errorf("server load: %w", err)
	}
	res.HistoryColdMBPerS, res.HistoryCachedMBPerS, res.HistoryPages, err = timeHistoryPages(ctx, c, sr.large, sr.largeToken, cfg.StateMessages, cfg.Reads)
	if err != nil {
		return nil, fmt.Errorf("server load: history pages: %w", err)
	}
	return res, nil
}

// serveLoopback serves h as 'parley serve' does (NewHTTPServer's settings) on a free loopback
// port, and returns its base URL and the function that stops it.
func serveLoopback(h http.Handler, log *slog.Logger) (base string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := phttp.NewHTTPServer("127.0.0.1:0", h, log)
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}

// timeRead reads the whole history n times and returns the median.
func timeRead(ctx context.Context, c *client.Client, room string, n int) (ReadCost, error) {
	var times []time.Duration
	size, msgs := 0, 0
	for range n {
		t0 := time.Now()
		b, _, err := c.History(ctx, nil, room, 0, 0)
		if err != nil {
			return ReadCost{}, err
		}
		times = append(times, time.Since(t0))
		size = len(b)
		msgs = countHeaders(b)
	}
	slices.Sort(times)
	med := times[len(times)/2]
	rc := ReadCost{Messages: msgs, Bytes: size, MS: ms(med)}
	if size > 0 {
		rc.NSPerByte = float64(med.Nanoseconds()) / float64(size)
		rc.BytesPerSecMB = float64(size) / med.Seconds() / (1 << 20)
	}
	return rc, nil
}

// countHeaders counts the message headers ("#<seq> …" lines) of history text; a body line
// can never start that way.
func countHeaders(b []byte) int {
	n := 0
	for i := 0; i+1 < len(b); i++ {
		if (i == 0 || b[i-1] == '\n') && b[i] == '#' && b[i+1] >= '0' && b[i+1] <= '9' {
			n++
		}
	}
	return n
}

func percentiles(d []time.Duration) Percentiles {
	if len(d) == 0 {
		return Percentiles{}
	}
	slices.Sort(d)
	at := func(q float64) float64 {
		i := int(q*float64(len(d))+0.5) - 1
		return ms(d[min(max(i, 0), len(d)-1)])
	}
	return Percentiles{P50: at(0.50), P95: at(0.95), P99: at(0.99), Max: ms(d[len(d)-1])}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps of strings and numbers reach here
	}
	return b
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
