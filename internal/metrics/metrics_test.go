package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/client"
	phttp "github.com/parleyhq/parley/http"
	"github.com/parleyhq/parley/internal/metrics"
	"github.com/parleyhq/parley/internal/sqlitetest"
	"github.com/parleyhq/parley/room"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// server is the room service on SQLite behind the HTTP edge on 127.0.0.1:0, wired to one
// registry as `parley serve` wires it.
type server struct {
	url   string
	admin string
	svc   *room.Service
}

// start serves; mount, if given, mounts other edges before the server starts.
func start(t *testing.T, mount ...func(*phttp.Server)) *server {
	t.Helper()
	store := sqlitetest.Open(t)
	log := slog.New(slog.DiscardHandler)
	reg := metrics.New()
	reg.StoreCommits(store.CommitStats) // as `parley serve` does on SQLite
	admin := "parley_admin_" + strings.Repeat("m", 32)
	svc, err := room.New(store, room.Config{AdminToken: admin, Logger: log, Observer: reg})
	if err != nil {
		t.Fatal(err)
	}
	h := phttp.NewServer(svc, phttp.WithLogger(log), phttp.WithRenderer(room.Renderer{}), phttp.WithMetrics(reg))
	for _, m := range mount {
		m(h)
	}
	srv := phttp.NewHTTPServer("127.0.0.1:0", h, log)
	srv.RegisterOnShutdown(h.CloseStreams)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	})
	return &server{url: "http://" + ln.Addr().String(), admin: admin, svc: svc}
}

// scrape reads /metrics and parses it with the client library's text parser.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET /metrics: %d %s", resp.StatusCode, b)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// family returns the family name of type typ, failing the test without it.
func family(t *testing.T, fams map[string]*dto.MetricFamily, name string, typ dto.MetricType) *dto.MetricFamily {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("no family %s", name)
	}
	if f.GetType() != typ {
		t.Fatalf("%s is a %s, want a %s", name, f.GetType(), typ)
	}
	return f
}

// byLabel maps the value of label to each series' value (a counter's or gauge's; a
// histogram's sample count), checking that every series has exactly the labels named.
func byLabel(t *testing.T, f *dto.MetricFamily, label string, others ...string) map[string]float64 {
	t.Helper()
	want := append([]string{label}, others...)
	out := map[string]float64{}
	for _, m := range f.Metric {
		var names []string
		key := ""
		for _, l := range m.Label {
			names = append(names, l.GetName())
			if l.GetName() == label {
				key = l.GetValue()
			}
		}
		if strings.Join(names, ",") != strings.Join(sorted(want), ",") {
			t.Errorf("%s series has labels %v, want %v", f.GetName(), names, sorted(want))
		}
		out[key] += value(m)
	}
	return out
}

func sorted(s []string) []string {
	c := append([]string(nil), s...)
	for i := range c {
		for j := i + 1; j < len(c); j++ {
			if c[j] < c[i] {
				c[i], c[j] = c[j], c[i]
			}
		}
	}
	return c
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return 0
}

func equal(t *testing.T, what string, got, want map[string]float64) {
	t.Helper()
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s{%s} = %v, want %v (all: %v)", what, k, got[k], w, got)
		}
	}
}

// TestScrape drives a real server through posts, refusals, a replayed retry, evidence of
// every verdict, a lapse and an event stream, then checks /metrics counted each exactly.
func TestScrape(t *testing.T) {
	s := start(t)
	ctx := t.Context()
	adm, err := client.New(s.url, s.admin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateRoom(ctx, nil, "r", nil); err != nil {
		t.Fatal(err)
	}
	tokens := map[string]string{}
	for name, role := range map[string]parley.Role{"a": parley.RoleAgent, "b": parley.RoleAgent, "ci": parley.RoleRunner} {
		_, tok, err := adm.AddSeat(ctx, nil, "r", name, role)
		if err != nil {
			t.Fatal(err)
		}
		tokens[name] = tok
	}
	a, ci := adm.WithToken(tokens["a"]), adm.WithToken(tokens["ci"])
	for _, run := range []string{`{"id":"ci-1","passed":3,"failed":0}`, `{"id":"ci-2","passed":2,"failed":1}`} {
		if _, err := ci.PostRun(ctx, nil, "r", "application/json", []byte(run), ""); err != nil {
			t.Fatal(err)
		}
	}

	stored := 0
	post := func(body, key string, wantCode string) {
		t.Helper()
		_, err := a.Post(ctx, nil, "r", []byte(body), key)
		if got := parley.ErrorCode(err); got != wantCode {
			t.Fatalf("post %q: %v, want code %q", body, err, wantCode)
		}
		if err == nil {
			stored++
		}
	}
	post("v1 note plan to b n=1\nthe limiter goes first\n", "", "")
	post("v1 note plan to b n=1\nthe limiter goes first\n", "", parley.ECONFLICT) // a repeat: 409
	post("v1 note plan to nobody n=1\nwhat\n", "", parley.EINVALID)               // 422
	post("v1 note plan to b n=1\nretried\n", "k-1", "")
	if _, err := a.Post(ctx, nil, "r", []byte("v1 note plan to b n=1\nretried\n"), "k-1"); err != nil { // replayed: 200
		t.Fatal(err)
	}
	// An ask whose time has passed lapses at the scheduler's next pass.
	post("v1 request plan to b n=2\nask pick one by 20200101T0000Z\ndefault A\n", "", "")
	post("v1 report plan to b n=6\ndone#1 suite green\nev#1 run ci-1\ndone#2 route test\nev#2 run ci-2\ndone#3 docs\nev#3 run ci-9\n", "", "")
	// A room that takes one message a minute from a seat: the second is refused with 429.
	slow := &parley.Policy{SeatMessagesPerMinute: 1, SeatBurst: 1}
	if _, err := adm.CreateRoom(ctx, nil, "slow", slow); err != nil {
		t.Fatal(err)
	}
	_, slowTok, err := adm.AddSeat(ctx, nil, "slow", "a", parley.RoleAgent)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"", parley.ERATELIMIT} {
		_, err := adm.WithToken(slowTok).Post(ctx, nil, "slow", fmt.Appendf(nil, "v1 note plan to all n=1\nfact %d\n", i), "")
		if parley.ErrorCode(err) != want {
			t.Fatalf("slow room post %d: %v, want %q", i, err, want)
		}
		if err == nil {
			stored++
		}
	}
	if n, err := s.svc.LapseDue(ctx); n != 1 || err != nil {
		t.Fatalf("LapseDue = %d, %v; want 1", n, err)
	}

	// An open event stream counts until it ends.
	ev, err := a.Events(ctx, nil, "r", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ev.Next(); err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, s.url)
	equal(t, metrics.OpenStreams, byLabel(t, family(t, fams, metrics.OpenStreams, dto.MetricType_GAUGE), "edge"),
		map[string]float64{"api": 1, "web": 0, "mcp": 0})
	ev.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		fams = scrape(t, s.url)
		open := byLabel(t, family(t, fams, metrics.OpenStreams, dto.MetricType_GAUGE), "edge")
		// A scrape gathers the collectors concurrently, not as one snapshot: wait for both
		// the gauge's drop and the request's count.
		req := fams[metrics.RequestDuration]
		if open["api"] == 0 && req != nil && byLabel(t, req, "route", "status_class")["GET /v1/rooms/{room}/events"] == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the closed stream still counts as open: %v", open)
		}
		time.Sleep(20 * time.Millisecond)
	}

	equal(t, metrics.Posts, byLabel(t, family(t, fams, metrics.Posts, dto.MetricType_COUNTER), "status"),
		map[string]float64{"201": float64(stored), "200": 1, "409": 1, "422": 1, "429": 1})
	equal(t, metrics.Refusals, byLabel(t, family(t, fams, metrics.Refusals, dto.MetricType_COUNTER), "code"),
		map[string]float64{parley.ECONFLICT: 1, parley.EINVALID: 1, parley.ERATELIMIT: 1})
	if got := family(t, fams, metrics.AsksLapsed, dto.MetricType_COUNTER).Metric[0].Counter.GetValue(); got != 1 {
		t.Errorf("%s = %v, want 1", metrics.AsksLapsed, got)
	}
	equal(t, metrics.EvidenceChecks, byLabel(t, family(t, fams, metrics.EvidenceChecks, dto.MetricType_COUNTER), "verdict"),
		map[string]float64{"verified": 1, "failed": 1, "unverified": 1})

	// The committer's series: every stored post and the lapse is a write it committed (the
	// runs and the counters are more), in at least one commit; its time in COMMIT is part of
	// its busy time.
	commit := func(name string) float64 {
		return family(t, fams, name, dto.MetricType_COUNTER).Metric[0].Counter.GetValue()
	}
	commits, writes := commit(metrics.Commits), commit(metrics.CommittedWrites)
	busy, inCommit := commit(metrics.CommitterBusy), commit(metrics.CommitSeconds)
	if writes < float64(stored+1) || commits < 1 || commits > writes || inCommit <= 0 || busy < inCommit || busy > 10 {
		t.Errorf("committer: %v commits of %v writes (at least %d stored), %vs busy, %vs in COMMIT", commits, writes, stored+1, busy, inCommit)
	}

	// Every stored post and the lapse is one append, and so is the repeat: the store's check
	// inside the append's transaction refuses it (room/post.go reads for a repeat before the
	// append only when a later check would refuse the post).
	app := family(t, fams, metrics.AppendDuration, dto.MetricType_HISTOGRAM).Metric[0].Histogram
	if want := uint64(stored + 2); app.GetSampleCount() != want || app.GetSampleSum() <= 0 || app.GetSampleSum() > 10 {
		t.Errorf("%s: count %d sum %v, want count %d and a plausible sum", metrics.AppendDuration, app.GetSampleCount(), app.GetSampleSum(), want)
	}

	// Durations are by route pattern, never by path, and by status class.
	req := family(t, fams, metrics.RequestDuration, dto.MetricType_HISTOGRAM)
	posts := map[string]float64{}
	for _, m := range req.Metric {
		var route, class string
		for _, l := range m.Label {
			switch l.GetName() {
			case "route":
				route = l.GetValue()
			case "status_class":
				class = l.GetValue()
			}
		}
		if strings.Contains(route, "/rooms/r") {
			t.Errorf("a route label holds a raw path: %q", route)
		}
		if route == metrics.PostRoute {
			posts[class] += value(m)
		}
		if h := m.Histogram; len(h.Bucket) == 0 || h.Bucket[len(h.Bucket)-1].GetCumulativeCount() > h.GetSampleCount() {
			t.Errorf("%s{%s,%s}: buckets %v", metrics.RequestDuration, route, class, h.Bucket)
		}
	}
	equal(t, metrics.RequestDuration+" "+metrics.PostRoute, posts, map[string]float64{"2xx": float64(stored + 1), "4xx": 3})
	if byLabel(t, req, "route", "status_class")["GET /v1/rooms/{room}/events"] != 1 {
		t.Errorf("the event stream's request is not counted by its pattern: %v", byLabel(t, req, "route", "status_class"))
	}

	if got := family(t, fams, metrics.Rooms, dto.MetricType_GAUGE).Metric[0].Gauge.GetValue(); got != 2 {
		t.Errorf("%s = %v, want 2", metrics.Rooms, got)
	}
	if got := family(t, fams, metrics.Uptime, dto.MetricType_GAUGE).Metric[0].Gauge.GetValue(); got <= 0 || got > 600 {
		t.Errorf("%s = %v", metrics.Uptime, got)
	}
	// The runtime and process collectors.
	if got := family(t, fams, "go_goroutines", dto.MetricType_GAUGE).Metric[0].Gauge.GetValue(); got < 1 {
		t.Errorf("go_goroutines = %v", got)
	}
	family(t, fams, "process_cpu_seconds_total", dto.MetricType_COUNTER)
	family(t, fams, "process_resident_memory_bytes", dto.MetricType_GAUGE)
}

// TestStreamEdges checks that any event stream the server carries counts as open by its
// edge, the UI's and MCP's as well as the API's, until its handler returns, an aborted one
// included.
func TestStreamEdges(t *testing.T) {
	release := make(chan struct{})
	stream := func(abort bool) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
			io.WriteString(w, "retry: 3000\n\n")
			w.(http.Flusher).Flush()
			<-release
			if abort {
				panic(http.ErrAbortHandler)
			}
		})
	}
	s := start(t, func(h *phttp.Server) {
		h.Handle("/", stream(false))
		h.Handle("/mcp", stream(true))
		h.Handle("/plain", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "not a stream") }))
	})
	var bodies []io.Closer
	for _, path := range []string{"/transcript/r/live", "/mcp", "/plain"} {
		resp, err := http.Get(s.url + path)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, resp.Body)
		if path != "/plain" {
			// The first event arrived: the handler is past its header.
			if _, err := resp.Body.Read(make([]byte, 8)); err != nil {
				t.Fatal(err)
			}
		}
	}
	defer func() {
		for _, b := range bodies {
			b.Close()
		}
	}()
	open := func() map[string]float64 {
		return byLabel(t, family(t, scrape(t, s.url), metrics.OpenStreams, dto.MetricType_GAUGE), "edge")
	}
	equal(t, metrics.OpenStreams, open(), map[string]float64{"web": 1, "mcp": 1, "api": 0})
	close(release)
	deadline := time.Now().Add(5 * time.Second)
	for o := open(); o["web"] != 0 || o["mcp"] != 0; o = open() {
		if time.Now().After(deadline) {
			t.Fatalf("streams still open after their handlers returned: %v", o)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRegistriesApart checks that two servers in one process count apart: each has a
// registry of its own, not the global one.
func TestRegistriesApart(t *testing.T) {
	one, two := start(t), start(t)
	for range 3 {
		resp, err := http.Get(one.url + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	count := func(url string) float64 {
		fams := scrape(t, url)
		if fams[metrics.RequestDuration] == nil {
			return 0 // nothing served yet but this scrape
		}
		return byLabel(t, family(t, fams, metrics.RequestDuration, dto.MetricType_HISTOGRAM), "route", "status_class")["GET /healthz"]
	}
	if c1, c2 := count(one.url), count(two.url); c1 != 3 || c2 != 0 {
		t.Errorf("healthz counted %v on the first server and %v on the second; want 3 and 0", c1, c2)
	}
}

func TestStatusClass(t *testing.T) {
	for in, want := range map[int]string{200: "2xx", 201: "2xx", 304: "3xx", 429: "4xx", 507: "5xx", 0: "other", 600: "other"} {
		if got := metrics.StatusClass(in); got != want {
			t.Errorf("StatusClass(%d) = %q, want %q", in, got, want)
		}
	}
}

// TestStoreCommits: each of the committer's four series carries its own figure, read at each
// scrape (hand-set figures, so that a series swapped with another shows).
func TestStoreCommits(t *testing.T) {
	reg := metrics.New()
	st := parley.CommitStats{Commits: 3, Writes: 7, Busy: 2500 * time.Millisecond, Commit: 1500 * time.Millisecond}
	reg.StoreCommits(func() parley.CommitStats { return st })
	fams, err := reg.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		if f.GetType() == dto.MetricType_COUNTER && strings.HasPrefix(f.GetName(), "parley_store_") {
			got[f.GetName()] = f.Metric[0].Counter.GetValue()
		}
	}
	equal(t, "committer", got, map[string]float64{metrics.Commits: 3, metrics.CommittedWrites: 7, metrics.CommitterBusy: 2.5, metrics.CommitSeconds: 1.5})
	st.Commits = 4
	fams, _ = reg.Registry().Gather()
	for _, f := range fams {
		if f.GetName() == metrics.Commits && f.Metric[0].Counter.GetValue() != 4 {
			t.Errorf("%s after another commit: %v, want 4", metrics.Commits, f.Metric[0].Counter.GetValue())
		}
	}
}
