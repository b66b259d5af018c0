package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parleyhq/parley/internal/pgtest"
	"github.com/parleyhq/parley/internal/servertest"
)

// The search route and posts by parts, through the real binary on each store: the ranking of
// a hand-built room, the JSON shape, hostile queries, the access rules of history, the count
// of reads, and the CLI.
func TestSearchSQLite(t *testing.T) {
	parley(t)
	s := servertest.Start(t, "serve sqlite", servertest.Options{DB: "sqlite:" + filepath.Join(t.TempDir(), "parley.db")})
	searchSuite(t, s)
}

func TestSearchPostgres(t *testing.T) {
	parley(t)
	s := servertest.Start(t, "serve postgres", servertest.Options{DB: pgtest.DSN(t)})
	searchSuite(t, s)
}

type searchAnswer struct {
	Query   string `json:"query"`
	Results []struct {
		Seq   int64    `json:"seq"`
		Seat  string   `json:"seat"`
		Time  string   `json:"time"`
		Topic string   `json:"topic"`
		Lines []string `json:"lines"`
	} `json:"results"`
	More bool `json:"more"`
}

func (a searchAnswer) seqs() []int64 {
	var out []int64
	for _, r := range a.Results {
		out = append(out, r.Seq)
	}
	return out
}

func searchSuite(t *testing.T, s *servertest.Server) {
	s.CreateRoom(t, "team", servertest.Generous())
	s.CreateRoom(t, "elsewhere", nil)
	builder := s.AddSeat(t, "team", "builder", "agent")
	lead := s.AddSeat(t, "team", "lead", "agent")
	gone := s.AddSeat(t, "team", "gone", "agent")
	cy := s.AddSeat(t, "elsewhere", "cy", "agent")

	// Every message by parts: the same header, seven words, and three words of facts, so that
	// no rank turns on length (see storetest's searchRoom for the ranks worked by hand).
	postParts := func(token string, lines ...string) int64 {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"intent": "note", "topic": "limiter", "to": []string{"lead"}, "lines": lines})
		r := s.Call(t, "POST", "/v1/rooms/team/messages", token, b, "Content-Type", "application/json")
		var out struct{ Seq int64 }
		if r.Status != 201 || r.JSON(&out) != nil {
			t.Fatalf("post by parts %q: %s", lines, r)
		}
		return out.Seq
	}
	for _, line := range []string{"nothing here yet", "redis window chosen", "redis kept here", "redis redis redis",
		"plain words only", "redis kept there", "cache warmed twice", "nothing to see", "filler one two", "filler three four"} {
		postParts(builder, line)
	}
	// The stored text is the composed one, n= counted by the server.
	hist, err := servertest.ParseHistory(s.History(t, "team", lead))
	if err != nil || len(hist) != 10 {
		t.Fatalf("history: %d messages, %v", len(hist), err)
	}
	if want := "v1 note limiter to lead n=1\nredis window chosen"; hist[1].Body != want {
		t.Fatalf("#2 as stored:\n%q\nwant\n%q", hist[1].Body, want)
	}

	search := func(token, query string, extra ...string) servertest.Response {
		t.Helper()
		q := url.Values{"q": {query}}
		for i := 0; i+1 < len(extra); i += 2 {
			q.Set(extra[i], extra[i+1])
		}
		return s.Call(t, "GET", "/v1/rooms/team/search?"+q.Encode(), token, nil)
	}
	wantSeqs := func(token, query string, want []int64, extra ...string) searchAnswer {
		t.Helper()
		r := search(token, query, extra...)
		var a searchAnswer
		if r.Status != 200 || r.JSON(&a) != nil || a.Query != query {
			t.Fatalf("search %q: %s", query, r)
		}
		if got := a.seqs(); !slices.Equal(got, want) {
			t.Fatalf("search %q %v: seqs %v, want %v", query, extra, got, want)
		}
		return a
	}

	stats := func() map[string]map[string]int64 {
		var st struct {
			Counters map[string]map[string]int64 `json:"counters"`
		}
		if r := s.Call(t, "GET", "/v1/rooms/team/stats", s.Admin, nil); r.Status != 200 || r.JSON(&st) != nil {
			t.Fatalf("stats: %s", r)
		}
		return st.Counters
	}
	before := stats()["lead"]

	a := wantSeqs(lead, "Redis window", []int64{2, 4, 6, 3})
	first := a.Results[0]
	if first.Seat != "builder" || first.Time != hist[1].Time || first.Topic != "limiter" || !slices.Equal(first.Lines, []string{"redis window chosen"}) || a.More {
		t.Errorf("the best result %+v (more %v); want #2 as history shows it (time %s), its one matching line", first, a.More, hist[1].Time)
	}
	if !slices.Equal(a.Results[1].Lines, []string{"redis redis redis"}) {
		t.Errorf("#4's lines: %q", a.Results[1].Lines)
	}
	a = wantSeqs(lead, "redis window", []int64{2, 4}, "limit", "2")
	if !a.More {
		t.Error("a search cut by its limit does not say there is more")
	}
	// Hostile queries are plain words: FTS5 and tsquery syntax neither errs nor acts.
	wantSeqs(lead, `"redis* NEAR( -window: OR`, []int64{2, 4, 6, 3})
	wantSeqs(lead, `redis' | 'x`, []int64{4, 6, 3, 2})
	wantSeqs(lead, `"*:( -`, nil)
	wantSeqs(lead, `'; DROP TABLE messages; --`, nil)
	if r := s.Call(t, "GET", "/v1/rooms/team/history", lead, nil); r.Status != 200 || !bytes.Contains(r.Body, []byte("filler three four")) {
		t.Fatalf("history after the hostile queries: %s", r)
	}

	// Counted as reads: one per search that found something (four above), with the tokens
	// of the lines it quoted.
	after := stats()["lead"]
	if got := after["searches"] - before["searches"]; got != 4 {
		t.Errorf("searches counted: %d, want 4", got)
	}
	if got := after["reads"] - before["reads"]; got != 5 { // and the history read between them
		t.Errorf("reads counted: %d, want 5", got)
	}
	if after["read_tokens"] <= before["read_tokens"] {
		t.Errorf("read_tokens did not grow: %d → %d", before["read_tokens"], after["read_tokens"])
	}

	// Bad requests are JSON errors that say what to do.
	for _, tc := range []struct {
		name, token, query string
		extra              []string
		status             int
		code, says         string
	}{
		{"empty q", lead, "  ", nil, 400, "invalid", "is empty"},
		{"long q", lead, strings.Repeat("a ", 257), nil, 400, "invalid", "over the 512"},
		{"limit over", lead, "redis", []string{"limit", "101"}, 400, "invalid", "limit=101"},
		{"limit zero", lead, "redis", []string{"limit", "0"}, 400, "invalid", "limit=0"},
		{"limit word", lead, "redis", []string{"limit", "ten"}, 400, "invalid", "limit"},
		{"no token", "", "redis", nil, 401, "unauthorized", ""},
		{"another room's seat", cy, "redis", nil, 403, "forbidden", "elsewhere"},
	} {
		r := search(tc.token, tc.query, tc.extra...)
		e := r.Err()
		if r.Status != tc.status || e.Error.Code != tc.code || !strings.Contains(e.Error.Message, tc.says) ||
			(tc.status == 400 && e.Error.Hint == "") {
			t.Errorf("%s: %s", tc.name, r)
		}
	}
	// A revoked seat cannot search, as it cannot read.
	if r := search(gone, "redis"); r.Status != 200 {
		t.Fatalf("search before revocation: %s", r)
	}
	if r := s.Call(t, "DELETE", "/v1/rooms/team/seats/gone", s.Admin, nil); r.Status/100 != 2 {
		t.Fatalf("revoke: %s", r)
	}
	if r := search(gone, "redis"); r.Status != 401 {
		t.Errorf("search by a revoked seat: %s", r)
	}
	if r := s.Call(t, "GET", "/v1/rooms/nosuch/search?q=redis", s.Admin, nil); r.Status != 404 {
		t.Errorf("search of no room: %s", r)
	}

	// Posts by parts that do not make a message are refused with diagnostics; nothing stored.
	for _, tc := range []struct{ name, body, says string }{
		{"no lines", `{"intent":"note","topic":"x","to":["lead"],"lines":[]}`, "lines is empty"},
		{"a header line", `{"intent":"note","topic":"x","to":["lead"],"lines":["v1 note x to all n=1"]}`, "itself a header"},
		{"newline", `{"intent":"note","topic":"x","to":["lead"],"lines":["a\nb"]}`, "line break"},
		{"bad intent", `{"intent":"shout","topic":"x","to":["lead"],"lines":["a"]}`, "shout"},
		{"two-word topic", `{"intent":"note","topic":"rate limiter","to":["lead"],"lines":["a"]}`, "not one word"},
		{"to a string", `{"intent":"note","topic":"x","to":"lead","lines":["a"]}`, "to"},
		{"both", `{"body":"v1 note x to lead n=1\na\n","intent":"note"}`, "both body"},
		{"unknown field", `{"intent":"note","topic":"x","to":["lead"],"facts":["a"]}`, "facts"},
		{"not a seat here", `{"intent":"note","topic":"x","to":["cy"],"lines":["a"]}`, "cy"},
	} {
		r := s.Call(t, "POST", "/v1/rooms/team/messages", builder, []byte(tc.body), "Content-Type", "application/json")
		if r.Status/100 != 4 || r.Err().Error.Code != "invalid" || !strings.Contains(r.Err().Error.Message, tc.says) {
			t.Errorf("%s: %s", tc.name, r)
		}
	}
	// The whole text as body, in JSON, is a post like any other.
	if r := s.Call(t, "POST", "/v1/rooms/team/messages", builder, []byte(`{"body":"v1 note limiter to lead re 2 n=1\nwindow kept open\n"}`), "Content-Type", "application/json; charset=utf-8"); r.Status != 201 {
		t.Fatalf("JSON body: %s", r)
	}
	if hist, _ := servertest.ParseHistory(s.History(t, "team", lead)); len(hist) != 11 || hist[10].Body != "v1 note limiter to lead re 2 n=1\nwindow kept open" {
		t.Fatalf("after the refusals and one JSON body: %d messages, last %+v", len(hist), hist[len(hist)-1])
	}

	// The CLI: post by parts from stdin, then search, as text and JSON.
	cli := func(token, stdin string, args ...string) (string, string, error) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = servertest.CleanEnv("PARLEY_URL="+s.URL, "PARLEY_TOKEN="+token)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		return out.String(), errOut.String(), err
	}
	out, errOut, err := cli(builder, "decided redis window\n\nopt/B later\n", "post", "team", "--intent", "decide", "--topic", "limiter", "--to", "lead,builder", "--re", "2")
	if err != nil || out != "posted #12 (22 tokens)\n" && !strings.HasPrefix(out, "posted #12 ") {
		t.Fatalf("parley post by parts: %v\n%s%s", err, out, errOut)
	}
	if hist, _ := servertest.ParseHistory(s.History(t, "team", lead)); hist[11].Body != "v1 decide limiter to lead,builder re 2 n=2\ndecided redis window\nopt/B later" {
		t.Fatalf("#12 as stored: %q", hist[11].Body)
	}
	_, errOut, err = cli(builder, "x\n", "post", "team", "--intent", "note")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(errOut, "--topic and --to missing") {
		t.Errorf("parley post --intent alone: %v %s", err, errOut)
	}
	out, errOut, err = cli(lead, "", "search", "team", "decided", "redis", "--limit", "3")
	wantOut := fmt.Sprintf("#12 builder %s topic limiter\n  decided redis window\n", hist[len(hist)-1].Time)
	if err != nil || !strings.HasPrefix(out, "#12 builder ") || !strings.Contains(out, "  decided redis window\n") || !strings.HasSuffix(out, "(more matches: raise the limit, or add words)\n") {
		t.Errorf("parley search: %v\n%s%s(want it to start like %q)", err, out, errOut, wantOut)
	}
	out, _, err = cli(lead, "", "search", "team", "redis window", "--json", "--limit", "1")
	var a1 searchAnswer
	if err != nil || json.Unmarshal([]byte(out), &a1) != nil || len(a1.Results) != 1 || !a1.More {
		t.Errorf("parley search --json: %v %s", err, out)
	}
	out, _, err = cli(lead, "", "search", "--help")
	if err != nil || !strings.Contains(out, "Usage: parley search ROOM QUERY") || !strings.Contains(out, "Examples:") {
		t.Errorf("parley search --help: %v\n%s", err, out)
	}
	_, errOut, err = cli(cy, "", "search", "team", "redis")
	if err == nil || !strings.Contains(errOut, "elsewhere") {
		t.Errorf("parley search of another room: %v %s", err, errOut)
	}
}
