package http

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parleyhq/parley"
)

// durationBuckets are the histogram's upper bounds in seconds: a post is a few milliseconds
// on SQLite; anything near a second is worth seeing.
var durationBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

const postRoute = "POST /v1/rooms/{room}/messages"

// metrics is the server's own counters, written out in the Prometheus text format by hand
// (a handful of series does not justify a client library).
type metrics struct {
	start   time.Time
	streams atomic.Int64

	mu        sync.Mutex
	posts     map[int]int64         // by HTTP status
	requests  map[routeStatus]int64 // by route and status
	durations map[string]*histogram // by route
}

type routeStatus struct {
	route  string
	status int
}

type histogram struct {
	counts []int64 // per bucket, not cumulative
	count  int64
	sum    float64
}

func newMetrics() *metrics {
	return &metrics{
		start:     time.Now(),
		posts:     map[int]int64{},
		requests:  map[routeStatus]int64{},
		durations: map[string]*histogram{},
	}
}

func (m *metrics) observe(route string, status int, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if route == postRoute {
		m.posts[status]++
	}
	m.requests[routeStatus{route, status}]++
	h := m.durations[route]
	if h == nil {
		h = &histogram{counts: make([]int64, len(durationBuckets))}
		m.durations[route] = h
	}
	sec := d.Seconds()
	for i, ub := range durationBuckets {
		if sec <= ub {
			h.counts[i]++
			break
		}
	}
	h.count++
	h.sum += sec
}

func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	var b strings.Builder
	m := s.metrics

	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	// The gauge counts every room, so it asks as the server's admin; the count is the only
	// thing exposed.
	if rooms, err := s.svc.Rooms(ctx, &parley.Caller{Admin: true}); err == nil {
		fmt.Fprintf(&b, "# HELP parley_rooms Rooms on this server.\n# TYPE parley_rooms gauge\nparley_rooms %d\n", len(rooms))
	} else {
		s.log.Error("metrics: count rooms", "err", err)
	}
	fmt.Fprintf(&b, "# HELP parley_uptime_seconds Seconds since this process started serving.\n# TYPE parley_uptime_seconds gauge\nparley_uptime_seconds %.3f\n", time.Since(m.start).Seconds())
	fmt.Fprintf(&b, "# HELP parley_event_streams Open event streams (GET …/events).\n# TYPE parley_event_streams gauge\nparley_event_streams %d\n", m.streams.Load())

	m.mu.Lock()
	b.WriteString("# HELP parley_posts_total Message posts by HTTP status.\n# TYPE parley_posts_total counter\n")
	for _, st := range sortedKeys(m.posts, func(a, b int) bool { return a < b }) {
		fmt.Fprintf(&b, "parley_posts_total{code=\"%d\"} %d\n", st, m.posts[st])
	}
	b.WriteString("# HELP parley_http_requests_total HTTP requests by route and status.\n# TYPE parley_http_requests_total counter\n")
	for _, k := range sortedKeys(m.requests, func(a, b routeStatus) bool {
		return a.route < b.route || a.route == b.route && a.status < b.status
	}) {
		fmt.Fprintf(&b, "parley_http_requests_total{route=%s,code=\"%d\"} %d\n", quoteLabel(k.route), k.status, m.requests[k])
	}
	b.WriteString("# HELP parley_http_request_duration_seconds HTTP request durations by route (event streams count their whole life).\n# TYPE parley_http_request_duration_seconds histogram\n")
	for _, route := range sortedKeys(m.durations, func(a, b string) bool { return a < b }) {
		h := m.durations[route]
		q := quoteLabel(route)
		var cum int64
		for i, ub := range durationBuckets {
			cum += h.counts[i]
			fmt.Fprintf(&b, "parley_http_request_duration_seconds_bucket{route=%s,le=\"%s\"} %d\n", q, strconv.FormatFloat(ub, 'g', -1, 64), cum)
		}
		fmt.Fprintf(&b, "parley_http_request_duration_seconds_bucket{route=%s,le=\"+Inf\"} %d\n", q, h.count)
		fmt.Fprintf(&b, "parley_http_request_duration_seconds_sum{route=%s} %g\n", q, h.sum)
		fmt.Fprintf(&b, "parley_http_request_duration_seconds_count{route=%s} %d\n", q, h.count)
	}
	m.mu.Unlock()

	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Write([]byte(b.String()))
}

// quoteLabel quotes a label value as the exposition format wants: backslash, quote and
// newline escaped.
func quoteLabel(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

func sortedKeys[K comparable, V any](m map[K]V, less func(a, b K) bool) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return less(keys[i], keys[j]) })
	return keys
}
