package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/parleyhq/parley/loadbench"
)

// benchServerRuns is the JSON of `parley bench server --runs N` with N > 1: every run's
// results, and the medians of the figures that are compared between builds.
type benchServerRuns struct {
	Runs   []*loadbench.Result `json:"runs"`
	Median benchMedian         `json:"median"`
}

// benchMedian holds the median over the runs of each figure, taken figure by figure (so the
// medians need not come from one run). A ratio (posts over a floor) is the median of the
// runs' ratios, not the ratio of two medians. Min and max of the posts per second show the
// spread.
type benchMedian struct {
	Runs                 int                   `json:"runs"`
	PostsPerSecond       float64               `json:"posts_per_second"`
	PostsPerSecondMin    float64               `json:"posts_per_second_min"`
	PostsPerSecondMax    float64               `json:"posts_per_second_max"`
	LatencyMS            loadbench.Percentiles `json:"post_latency_ms"`
	CPUMicrosPerPost     float64               `json:"cpu_us_per_post,omitempty"`
	MallocsPerPost       float64               `json:"mallocs_per_post"`
	AllocBytesPerPost    float64               `json:"total_alloc_per_post_bytes"`
	CommitFloor          float64               `json:"commit_floor_per_second,omitempty"`
	PostsOverCommitFloor float64               `json:"posts_over_commit_floor,omitempty"`
	FloorPostsPerSecond  float64               `json:"floor_posts_per_second,omitempty"`
	FloorShare           float64               `json:"floor_share,omitempty"`
	Committer            *loadbench.Committer  `json:"committer,omitempty"`
}

// median of xs (the mean of the middle two for an even count); 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// medianOf works out the medians of the runs (at least one).
func medianOf(runs []*loadbench.Result) benchMedian {
	of := func(f func(r *loadbench.Result) float64) float64 {
		xs := make([]float64, 0, len(runs))
		for _, r := range runs {
			xs = append(xs, f(r))
		}
		return median(xs)
	}
	m := benchMedian{Runs: len(runs)}
	m.PostsPerSecond = of(func(r *loadbench.Result) float64 { return r.PostsPerSecond })
	m.PostsPerSecondMin, m.PostsPerSecondMax = runs[0].PostsPerSecond, runs[0].PostsPerSecond
	for _, r := range runs {
		m.PostsPerSecondMin = min(m.PostsPerSecondMin, r.PostsPerSecond)
		m.PostsPerSecondMax = max(m.PostsPerSecondMax, r.PostsPerSecond)
	}
	m.LatencyMS = loadbench.Percentiles{
		P50: of(func(r *loadbench.Result) float64 { return r.LatencyMS.P50 }),
		P95: of(func(r *loadbench.Result) float64 { return r.LatencyMS.P95 }),
		P99: of(func(r *loadbench.Result) float64 { return r.LatencyMS.P99 }),
		Max: of(func(r *loadbench.Result) float64 { return r.LatencyMS.Max }),
	}
	m.CPUMicrosPerPost = of(func(r *loadbench.Result) float64 { return r.Memory.CPUMicrosPerPost })
	m.MallocsPerPost = of(func(r *loadbench.Result) float64 { return r.Memory.MallocsPerPost })
	m.AllocBytesPerPost = of(func(r *loadbench.Result) float64 { return r.Memory.TotalAllocPerPost })
	m.CommitFloor = of(func(r *loadbench.Result) float64 { return r.CommitFloor })
	m.PostsOverCommitFloor = of(func(r *loadbench.Result) float64 { return r.PostsOverCommitFloor })
	floor := func(f func(fl *loadbench.Floor) float64) func(r *loadbench.Result) float64 {
		return func(r *loadbench.Result) float64 {
			if r.Floor == nil {
				return 0
			}
			return f(r.Floor)
		}
	}
	m.FloorPostsPerSecond = of(floor(func(fl *loadbench.Floor) float64 { return fl.PostsPerSecond }))
	m.FloorShare = of(floor(func(fl *loadbench.Floor) float64 { return fl.Share }))
	if runs[0].Committer != nil {
		c := func(f func(c *loadbench.Committer) float64) float64 {
			return of(func(r *loadbench.Result) float64 {
				if r.Committer == nil {
					return 0
				}
				return f(r.Committer)
			})
		}
		m.Committer = &loadbench.Committer{
			Commits:        int64(c(func(c *loadbench.Committer) float64 { return float64(c.Commits) }) + 0.5),
			PostsPerCommit: c(func(c *loadbench.Committer) float64 { return c.PostsPerCommit }),
			BusyShare:      c(func(c *loadbench.Committer) float64 { return c.BusyShare }),
			CommitShare:    c(func(c *loadbench.Committer) float64 { return c.CommitShare }),
			CommitMS:       c(func(c *loadbench.Committer) float64 { return c.CommitMS }),
		}
	}
	return m
}

// benchServerLine is one run in a line, printed as each run of --runs ends.
func benchServerLine(r *loadbench.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%.0f posts/s, p50 %.1f ms, p99 %.1f ms", r.PostsPerSecond, r.LatencyMS.P50, r.LatencyMS.P99)
	if r.Memory.CPUMicrosPerPost > 0 {
		fmt.Fprintf(&b, ", %.0f µs CPU per post", r.Memory.CPUMicrosPerPost)
	}
	if r.CommitFloor > 0 {
		fmt.Fprintf(&b, ", commit floor %.0f/s (posts %.2f× it)", r.CommitFloor, r.PostsOverCommitFloor)
	}
	if c := r.Committer; c != nil {
		fmt.Fprintf(&b, ", committer busy %.0f%% at %.2f ms per COMMIT", 100*c.BusyShare, c.CommitMS)
	}
	if r.Errors > 0 {
		fmt.Fprintf(&b, ", %d errors", r.Errors)
	}
	return b.String()
}

// benchMedianText is the text report of --runs N: the medians, under the lines of the runs.
func benchMedianText(runs []*loadbench.Result, m benchMedian) string {
	r := runs[0]
	var b strings.Builder
	fmt.Fprintf(&b, "\nparley bench server: %s, %d seats in %s, %d messages, GOMAXPROCS %d; medians of %d runs\n\n",
		r.Store, r.Seats, plural(r.Rooms, "room", "rooms"), r.Messages, r.GOMAXPROCS, m.Runs)
	fmt.Fprintf(&b, "posts      %.0f/s durable (%.0f–%.0f)\n", m.PostsPerSecond, m.PostsPerSecondMin, m.PostsPerSecondMax)
	fmt.Fprintf(&b, "latency    p50 %.1f ms  p95 %.1f ms  p99 %.1f ms  max %.1f ms\n", m.LatencyMS.P50, m.LatencyMS.P95, m.LatencyMS.P99, m.LatencyMS.Max)
	fmt.Fprintf(&b, "memory     %.0f bytes and %.0f allocations per post\n", m.AllocBytesPerPost, m.MallocsPerPost)
	if m.CPUMicrosPerPost > 0 {
		fmt.Fprintf(&b, "cpu        %.0f µs per post\n", m.CPUMicrosPerPost)
	}
	if m.CommitFloor > 0 {
		fmt.Fprintf(&b, "commits    %.0f/s single-commit floor; the posts %.2f× it (the median of the runs' ratios)\n", m.CommitFloor, m.PostsOverCommitFloor)
	}
	if c := m.Committer; c != nil {
		fmt.Fprintf(&b, "committer  %.1f posts per commit; busy %.0f%% of the posting time, %.0f%% of that in COMMIT, %.2f ms each\n",
			c.PostsPerCommit, 100*c.BusyShare, 100*c.CommitShare, c.CommitMS)
	}
	if m.FloorPostsPerSecond > 0 {
		fmt.Fprintf(&b, "floor      %.0f/s; the server reached %.0f%% of it (the median of the runs' shares)\n", m.FloorPostsPerSecond, 100*m.FloorShare)
	}
	return b.String()
}
