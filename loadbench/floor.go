package loadbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parleyhq/parley/internal/postjson"
)

// Floor is the same posting, by the same seats through the same client, to an HTTP server in
// this process that stores and checks nothing: net/http with the settings of 'parley serve',
// whose handler checks that the post carries a bearer token, reads its body and answers 201
// with a post's answer, its seq counted per room. What it reaches is what this machine's
// loopback, net/http and this client allow at these seats, before any of parley's work: a
// ceiling for the server under test, measured in the same run (after posting, so both meet
// the machine's load of the moment).
type Floor struct {
	Posts          int         `json:"posts"`
	PostsPerSecond float64     `json:"posts_per_second"`
	LatencyMS      Percentiles `json:"post_latency_ms"`
	// CPUMicrosPerPost is this process's CPU time over the floor's posting divided by its
	// posts: the client and the empty server together. 0 where the system does not report it.
	CPUMicrosPerPost float64 `json:"cpu_us_per_post"`
	// Share is the server's posts per second (Result.PostsPerSecond) over the floor's.
	Share float64 `json:"share"`
}

// floorPosts is how many posts the floor takes at most: enough for a steady rate at any
// number of seats, a fraction of a second of the machine's time.
const floorPosts = 10000

// runFloor measures the Floor with one new poster per seat, each seat posting to its room's
// path as in the run (to[s] its addressee), posts messages in all.
func runFloor(ctx context.Context, seats, to, rooms []string, posts int) (*Floor, error) {
	base, stop, err := serveLoopback(&floorServer{seqs: map[string]int64{}}, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	defer stop()
	posters := make([]*poster, len(seats))
	for s := range seats {
		if posters[s], err = newPoster(base, rooms[s%len(rooms)], "floor-"+seats[s]); err != nil {
			return nil, fmt.Errorf("floor: %w", err)
		}
		defer posters[s].Close()
	}
	pctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var (
		next     atomic.Int64
		firstErr atomic.Pointer[error]
	)
	cpu0, ok0 := processCPU()
	start := time.Now()
	lat, _ := postPhase(pctx, posters, seats, to, &next, posts, func(err error) { firstErr.CompareAndSwap(nil, &err) })
	took := time.Since(start)
	cpu1, ok1 := processCPU()
	if e := firstErr.Load(); e != nil {
		return nil, fmt.Errorf("floor: %w", *e)
	}
	f := &Floor{Posts: posts, PostsPerSecond: float64(posts) / took.Seconds(), LatencyMS: percentiles(lat)}
	if ok0 && ok1 {
		f.CPUMicrosPerPost = float64(cpu1-cpu0) / float64(posts)
	}
	return f, nil
}

// floorServer is the floor's handler: POST …/messages with a bearer token and a body of at
// most maxFloorBody bytes gets 201 and {"seq":N,"tokens":0,"notes":[],"warnings":[]}, N
// counted per path; anything else a 4xx.
type floorServer struct {
	mu   sync.Mutex
	seqs map[string]int64
}

// maxFloorBody is the body cap of the floor's posts (the server's is larger; the bench's
// posts are far smaller than either).
const maxFloorBody = 1 << 20

func (f *floorServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/messages") {
		http.Error(w, "the floor takes only posts", http.StatusNotFound)
		return
	}
	if token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); !ok || token == "" {
		http.Error(w, "no bearer token", http.StatusUnauthorized)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxFloorBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	case err != nil:
		http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
		return
	case len(body) == 0:
		http.Error(w, "empty body", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.seqs[r.URL.Path]++
	seq := f.seqs[r.URL.Path]
	f.mu.Unlock()
	out := append(postjson.Append(make([]byte, 0, 64), seq, 0, []string{}, nil), '\n')
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	w.Write(out)
}

// postPhase has each poster, in a goroutine of its own, post the messages that next hands
// out (loadPostTo of index i, from seats[s] to to[s]) until next reaches stop, each seat
// waiting for its post's answer before it sends the next. It returns every post's latency and
// how many posts each seat had acknowledged; onErr is called (from the seats' goroutines)
// with each failure, and a seat stops at its first failure once ctx is done.
func postPhase(ctx context.Context, posters []*poster, seats, to []string, next *atomic.Int64, stop int, onErr func(error)) ([]time.Duration, []int) {
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		latencies []time.Duration
	)
	acked := make([]int, len(posters))
	for s, p := range posters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]time.Duration, 0, max(stop-int(next.Load()), 0)/len(posters)+1)
			defer func() {
				mu.Lock()
				latencies = append(latencies, mine...)
				mu.Unlock()
			}()
			for {
				// An atomic counter, not a lock that every seat would queue on once a post.
				i := int(next.Add(1)) - 1
				if i >= stop {
					return
				}
				p.buf = loadPostTo(p.buf[:0], i, seats[s], to[s])
				t0 := time.Now()
				_, err := p.post(ctx, p.buf)
				mine = append(mine, time.Since(t0))
				if err == nil {
					acked[s]++
					continue
				}
				onErr(err)
				if ctx.Err() != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	return latencies, acked
}
