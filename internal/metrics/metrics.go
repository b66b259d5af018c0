// Package metrics owns the server's Prometheus registry: the Go runtime and process
// collectors, and parley's own series. The room service reports into it through
// room.Observer (lapses, evidence verdicts, refusals, store append latency), the HTTP edge
// through the methods below (requests, posts, open streams); `parley serve` builds one and
// hands it to both.
//
// Each Metrics has a registry of its own, not the global default one, so that a test can run
// several servers in one process.
package metrics

import (
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/parleyhq/parley"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Series names, for tests and dashboards.
const (
	Posts           = "parley_posts_total"
	Refusals        = "parley_refusals_total"
	RequestDuration = "parley_http_request_duration_seconds"
	OpenStreams     = "parley_open_streams"
	AsksLapsed      = "parley_asks_lapsed_total"
	EvidenceChecks  = "parley_evidence_checks_total"
	AppendDuration  = "parley_store_append_duration_seconds"
	Rooms           = "parley_rooms"
	Uptime          = "parley_uptime_seconds"
	// The store's group commit (StoreCommits): SQLite's committer.
	Commits         = "parley_store_commits_total"
	CommittedWrites = "parley_store_committed_writes_total"
	CommitterBusy   = "parley_store_committer_busy_seconds_total"
	CommitSeconds   = "parley_store_commit_seconds_total"
)

// requestBuckets are the upper bounds of request durations in seconds: a post is a few
// milliseconds on SQLite; anything near a second is worth seeing. Event streams count their
// whole life and land in +Inf.
var requestBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// appendBuckets are those of one store append: tens of microseconds on a warm SQLite file,
// milliseconds with an fsync or a PostgreSQL round trip, seconds only when something is wrong.
var appendBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}

// Metrics is one server's registry and series. Its methods are safe for concurrent use; a nil
// *Metrics records nothing.
type Metrics struct {
	reg      *prometheus.Registry
	start    time.Time
	posts    *prometheus.CounterVec
	refusals *prometheus.CounterVec
	requests *prometheus.HistogramVec
	streams  *prometheus.GaugeVec
	lapsed   prometheus.Counter
	evidence *prometheus.CounterVec
	appends  prometheus.Histogram
	// The series of a post answered 201 Created (the route's duration, 2xx; the posts,
	// 201), made by the first such post (a series appears when first counted).
	created atomic.Pointer[createdSeries]
}

type createdSeries struct {
	duration prometheus.Observer
	count    prometheus.Counter
}

// New returns a registry holding the Go runtime and process collectors and parley's series.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), start: time.Now()}
	m.posts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: Posts,
		Help: "Message posts over HTTP by response status (201 stored, 200 replayed retry, 409 repeat, 422 invalid, 429 rate cap, …).",
	}, []string{"status"})
	m.refusals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: Refusals,
		Help: "Posts the room refused, from any edge (HTTP, MCP, web), by error code (invalid, conflict, rate_limited, too_large, forbidden, …). Server faults are not refusals.",
	}, []string{"code"})
	m.requests = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    RequestDuration,
		Help:    "HTTP request durations by route pattern and status class (event streams count their whole life).",
		Buckets: requestBuckets,
	}, []string{"route", "status_class"})
	m.streams = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: OpenStreams,
		Help: "Open Server-Sent Event streams by edge (api: GET …/events; web: the UI's live transcript; mcp).",
	}, []string{"edge"})
	m.lapsed = prometheus.NewCounter(prometheus.CounterOpts{
		Name: AsksLapsed,
		Help: "Asks the scheduler closed because their time passed (a default applied or a lapse noted).",
	})
	m.evidence = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: EvidenceChecks,
		Help: "Evidence lines judged on posts, by verdict (verified, unverified, failed).",
	}, []string{"verdict"})
	m.appends = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    AppendDuration,
		Help:    "Time of one store append (a post or a lapse), successful or not.",
		Buckets: appendBuckets,
	})
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.posts, m.refusals, m.requests, m.streams, m.lapsed, m.evidence, m.appends,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: Uptime,
			Help: "Seconds since this process started serving.",
		}, func() float64 { return time.Since(m.start).Seconds() }),
	)
	// The zero series exist from the start, so a rate() over them has a baseline.
	for _, v := range []string{"verified", "unverified", "failed"} {
		m.evidence.WithLabelValues(v)
	}
	for _, e := range []string{"api", "web", "mcp"} {
		m.streams.WithLabelValues(e)
	}
	return m
}

// Registry is the registry the handler serves, for a caller that adds its own collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// CountRooms registers the parley_rooms gauge, which calls count at each scrape. A failed
// count is left out of that scrape (and reported by the handler's error log).
func (m *Metrics) CountRooms(count func() (int, error)) {
	m.reg.MustRegister(&roomsCollector{count: count, desc: prometheus.NewDesc(Rooms, "Rooms on this server.", nil, nil)})
}

// StoreCommits registers the four series of a store's group commit (parley.CommitStatser),
// read together at each scrape: transactions committed, the writes they carried, the seconds
// the committer spent on batches and, of those, in COMMIT (the log's writes and fsync). A busy
// rate near 1 second per second means the committer is what bounds the posts.
func (m *Metrics) StoreCommits(read func() parley.CommitStats) {
	m.reg.MustRegister(&commitCollector{read: read, descs: [4]*prometheus.Desc{
		prometheus.NewDesc(Commits, "Transactions the store's committer committed (each one fsync on SQLite).", nil, nil),
		prometheus.NewDesc(CommittedWrites, "Writes (posts, counters) those transactions carried.", nil, nil),
		prometheus.NewDesc(CommitterBusy, "Seconds the committer spent on batches, from taking the first write to answering the last.", nil, nil),
		prometheus.NewDesc(CommitSeconds, "Of those, seconds in COMMIT: the log's writes and its fsync.", nil, nil),
	}})
}

type commitCollector struct {
	read  func() parley.CommitStats
	descs [4]*prometheus.Desc
}

func (c *commitCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c *commitCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.read()
	for i, v := range []float64{float64(st.Commits), float64(st.Writes), st.Busy.Seconds(), st.Commit.Seconds()} {
		ch <- prometheus.MustNewConstMetric(c.descs[i], prometheus.CounterValue, v)
	}
}

type roomsCollector struct {
	count func() (int, error)
	desc  *prometheus.Desc
}

func (c *roomsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *roomsCollector) Collect(ch chan<- prometheus.Metric) {
	n, err := c.count()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n))
}

// Handler serves the registry in the Prometheus exposition format. A collector that fails
// (the room count) is logged through errLog and left out; the rest is served.
func (m *Metrics) Handler(errLog promhttp.Logger) http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorLog: errLog, ErrorHandling: promhttp.ContinueOnError})
}

// Request records one HTTP request: its ServeMux pattern (never the raw path, which would
// make a series per room), status and duration. A post (the pattern postRoute) also counts
// in parley_posts_total.
func (m *Metrics) Request(route string, status int, d time.Duration) {
	if m == nil {
		return
	}
	if route == PostRoute && status == 201 {
		// The common request: its two series are looked up once, not on every post.
		ps := m.created.Load()
		if ps == nil {
			ps = &createdSeries{m.requests.WithLabelValues(route, "2xx"), m.posts.WithLabelValues("201")}
			m.created.Store(ps)
		}
		ps.duration.Observe(d.Seconds())
		ps.count.Inc()
		return
	}
	m.requests.WithLabelValues(route, StatusClass(status)).Observe(d.Seconds())
	if route == PostRoute {
		m.posts.WithLabelValues(statusLabel(status)).Inc()
	}
}

// PostRoute is the ServeMux pattern of a post over HTTP.
const PostRoute = "POST /v1/rooms/{room}/messages"

// StatusClass is "2xx" for 200–299 and so on; "other" outside 100–599.
func StatusClass(status int) string {
	if status < 100 || status > 599 {
		return "other"
	}
	return statusClasses[status/100-1]
}

var statusClasses = [...]string{"1xx", "2xx", "3xx", "4xx", "5xx"}

// statusLabel is strconv.Itoa(status), without a new string for the statuses a post answers
// most (every post is counted by its status).
func statusLabel(status int) string {
	switch status {
	case 200:
		return "200"
	case 201:
		return "201"
	case 409:
		return "409"
	case 422:
		return "422"
	case 429:
		return "429"
	}
	return strconv.Itoa(status)
}

// StreamOpened counts an event stream of edge ("api", "web", "mcp") as open; call the
// function it returns when the stream ends.
func (m *Metrics) StreamOpened(edge string) (closed func()) {
	if m == nil {
		return func() {}
	}
	g := m.streams.WithLabelValues(edge)
	g.Inc()
	return g.Dec
}

// The methods below implement room.Observer.

// Lapsed counts n asks lapsed by the scheduler.
func (m *Metrics) Lapsed(n int) {
	if m != nil && n > 0 {
		m.lapsed.Add(float64(n))
	}
}

// EvidenceChecked counts one evidence verdict (evidence.Verified, Unverified or Failed).
func (m *Metrics) EvidenceChecked(verdict string) {
	if m != nil {
		m.evidence.WithLabelValues(verdict).Inc()
	}
}

// Refused counts a post the room refused with code (a parley error code).
func (m *Metrics) Refused(code string) {
	if m != nil {
		m.refusals.WithLabelValues(code).Inc()
	}
}

// AppendTook records the duration of one store append.
func (m *Metrics) AppendTook(d time.Duration) {
	if m != nil {
		m.appends.Observe(d.Seconds())
	}
}
