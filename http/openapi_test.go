package http_test

// The OpenAPI document (openapi.json, served at /openapi.json) is kept true here: every route
// registered in this package is in the document and the other way round, and a real server
// answers real requests to each route (successes and the main refusals), each request and
// answer checked against the document by libopenapi-validator.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	"github.com/pb33f/libopenapi-validator/content"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"

	"github.com/parleyhq/parley/internal/servertest"
)

// registeredRoutes reads the route patterns this package registers, from its source: every
// HandleFunc or Handle call with a "METHOD /path" literal. A registration whose pattern is not
// a literal fails the test, so no route can hide from it. The catch-alls ("/", "/v1/") and
// Server.Handle (which mounts other edges: MCP, the web UI) are not API routes.
func registeredRoutes(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var routes []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil || (fn.Name.Name == "Handle" && fn.Recv != nil) {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) != 2 {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || (sel.Sel.Name != "HandleFunc" && sel.Sel.Name != "Handle") {
					return true
				}
				lit, ok := call.Args[0].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Errorf("%s: a route registered with a pattern that is not a literal; this test cannot check it is documented", fset.Position(call.Pos()))
					return true
				}
				pattern, _ := strconv.Unquote(lit.Value)
				if strings.Contains(pattern, " ") {
					routes = append(routes, pattern)
				} else if pattern != "/" && pattern != "/v1/" {
					t.Errorf("%s: route %q has no method; give it one so the document can describe it", fset.Position(call.Pos()), pattern)
				}
				return true
			})
		}
	}
	sort.Strings(routes)
	return routes
}

// documentedRoutes lists the document's operations as "METHOD /path".
func documentedRoutes(doc *v3.Document) []string {
	var out []string
	for path, item := range doc.Paths.PathItems.FromOldest() {
		for method := range item.GetOperations().FromOldest() {
			out = append(out, strings.ToUpper(method)+" "+path)
		}
	}
	sort.Strings(out)
	return out
}

func loadDocument(t *testing.T, spec []byte) (*v3.Document, validator.Validator) {
	t.Helper()
	d, err := libopenapi.NewDocument(spec)
	if err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if v := d.GetVersion(); !strings.HasPrefix(v, "3.1.") {
		t.Fatalf("openapi.json is OpenAPI %s, want 3.1", v)
	}
	model, err := d.BuildV3Model()
	if err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	v, errs := validator.NewValidator(d, config.WithFormatAssertions(), config.WithBodyDecoder("application/x-ndjson", jsonLines))
	if len(errs) > 0 {
		t.Fatalf("openapi.json: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			t.Errorf("openapi.json is not a valid OpenAPI 3.1 document: %v", e)
		}
		t.FailNow()
	}
	return &model.Model, v
}

// jsonLines checks a body is JSON lines, one object a line, and hands the validator the text:
// OpenAPI 3.1 has no schema for a sequence of documents, so the document calls it a string.
var jsonLines = content.DecoderFunc(func(in *content.DecodeInput) (any, error) {
	b, err := io.ReadAll(in.Body)
	if err != nil {
		return nil, err
	}
	for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			return nil, fmt.Errorf("line %d is not a JSON object: %v", i+1, err)
		}
	}
	return string(b), nil
})

func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	spec, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := loadDocument(t, spec)
	registered, documented := registeredRoutes(t), documentedRoutes(doc)
	if len(registered) < 20 {
		t.Fatalf("found only %d registered routes (%v); the source scan is broken", len(registered), registered)
	}
	for _, r := range registered {
		if !slices.Contains(documented, r) {
			t.Errorf("route %q is registered in package http but not described in openapi.json", r)
		}
	}
	for _, r := range documented {
		if !slices.Contains(registered, r) {
			t.Errorf("openapi.json describes %q, which package http does not register", r)
		}
	}
}

// searchOp is checked by TestOpenAPIStructuredPostAndSearch rather than by
// TestOpenAPIMatchesTheServer's coverage.
const searchOp = "GET /v1/rooms/{room}/search"

// apiCheck sends real requests to a real server and checks each request and answer against
// the document, recording which operation answered which status.
type apiCheck struct {
	t      *testing.T
	doc    *v3.Document
	v      validator.Validator
	client *http.Client
	ops    []docOp
	hits   map[string]map[int]bool // "METHOD /path/{template}" → statuses seen
}

type docOp struct {
	key    string // "GET /v1/rooms/{room}"
	method string
	re     *regexp.Regexp
	params int
	secure bool
}

func newAPICheck(t *testing.T, spec []byte) *apiCheck {
	doc, v := loadDocument(t, spec)
	c := &apiCheck{t: t, doc: doc, v: v, hits: map[string]map[int]bool{},
		// No transparent gzip: the answer is checked as the server sent it.
		client: &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 30 * time.Second}}
	for path, item := range doc.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			re := regexp.MustCompile(`^` + regexp.MustCompile(`\\\{[a-z]+\\\}`).ReplaceAllString(regexp.QuoteMeta(path), `[^/]+`) + `$`)
			secure := op.Security == nil || len(op.Security) > 0
			c.ops = append(c.ops, docOp{key: strings.ToUpper(method) + " " + path, method: strings.ToUpper(method), re: re, params: strings.Count(path, "{"), secure: secure})
		}
	}
	return c
}

// opOf names the documented operation a request reaches: the one whose template matches with
// the fewest parameters (POST /v1/rooms/import before POST /v1/rooms/{room}).
func (c *apiCheck) opOf(method, path string) string {
	best := docOp{params: -1}
	for _, op := range c.ops {
		if op.method == method && op.re.MatchString(path) && (best.params < 0 || op.params < best.params) {
			best = op
		}
	}
	return best.key
}

// call describes one request and what it must get.
type call struct {
	method, path, token string
	body                []byte
	header              []string // name, value, name, value…
	want                int      // 0: any 4xx
	// badRequest says the request itself breaks the document (a bad query parameter, no
	// token…): the validator must refuse it too, and only the answer is checked.
	badRequest bool
	anyRequest bool   // the request's own fit is not the point: check only the answer
	base       string // another server's URL; "" = the check's default
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a answer) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(a.body, v); err != nil {
		t.Fatalf("answer is not JSON: %v\n%s", err, a.body)
	}
}

func (c *apiCheck) request(base string, k call, body []byte) *http.Request {
	r, err := http.NewRequest(k.method, base+k.path, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if k.token != "" {
		r.Header.Set("Authorization", "Bearer "+k.token)
	}
	for i := 0; i+1 < len(k.header); i += 2 {
		r.Header.Set(k.header[i], k.header[i+1])
	}
	return r
}

// do sends k, reads the whole answer, and checks both against the document.
func (c *apiCheck) do(base string, k call) answer {
	c.t.Helper()
	if k.base != "" {
		base = k.base
	}
	resp, err := c.client.Do(c.request(base, k, k.body))
	if err != nil {
		c.t.Fatalf("%s %s: %v", k.method, k.path, err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		c.t.Fatalf("%s %s: reading the answer: %v", k.method, k.path, err)
	}
	c.check(base, k, resp, body)
	return answer{resp.StatusCode, resp.Header, body}
}

// check validates a request and the answer it got (its body already read).
func (c *apiCheck) check(base string, k call, resp *http.Response, body []byte) {
	c.t.Helper()
	name := fmt.Sprintf("%s %s → %d", k.method, k.path, resp.StatusCode)
	if k.want == 0 && (resp.StatusCode < 400 || resp.StatusCode > 499) {
		c.t.Errorf("%s: want a refusal (4xx)\n%s", name, body)
	} else if k.want != 0 && resp.StatusCode != k.want {
		c.t.Errorf("%s: want %d\n%s", name, k.want, body)
	}
	op := c.opOf(k.method, strings.SplitN(k.path, "?", 2)[0])
	if op == "" {
		c.t.Errorf("%s: no operation in the document matches", name)
	} else {
		if c.hits[op] == nil {
			c.hits[op] = map[int]bool{}
		}
		c.hits[op][resp.StatusCode] = true
	}

	req := c.request(base, k, k.body)
	reqOK, reqErrs := c.v.ValidateHttpRequestSync(req)
	switch {
	case k.anyRequest:
	case k.badRequest && reqOK:
		c.t.Errorf("%s: the server refuses this request, but the document allows it", name)
	case !k.badRequest && !reqOK:
		for _, e := range reqErrs {
			c.t.Errorf("%s: request does not match the document: %v", name, e)
		}
	}
	// The answer on its own: ValidateHttpResponse checks the status is documented for the
	// operation, the headers, the content type and the body's schema.
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if ok, errs := c.v.ValidateHttpResponse(c.request(base, k, k.body), resp); !ok {
		for _, e := range errs {
			c.t.Errorf("%s: answer does not match the document: %v\n%s", name, e, clip(body))
		}
	}
}

func clip(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

// stream reads an event stream until its text holds until, then closes it and checks what
// was read as the answer.
func (c *apiCheck) stream(base string, k call, until string) answer {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := c.request(base, k, nil).WithContext(ctx)
	resp, err := c.client.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", k.method, k.path, err)
	}
	var got bytes.Buffer
	br := bufio.NewReader(resp.Body)
	for !strings.Contains(got.String(), until) {
		line, err := br.ReadString('\n')
		got.WriteString(line)
		if err != nil {
			c.t.Errorf("%s %s: stream ended before %q: %v\n%s", k.method, k.path, until, err, got.String())
			break
		}
	}
	cancel()
	resp.Body.Close()
	c.check(base, k, resp, got.Bytes())
	return answer{resp.StatusCode, resp.Header, got.Bytes()}
}

// coverage fails for every operation no request reached with a success, or, when it needs a
// token, with 401.
func (c *apiCheck) coverage(skip ...string) {
	c.t.Helper()
	for _, op := range c.ops {
		if slices.Contains(skip, op.key) {
			continue
		}
		var ok bool
		var seen []int
		for s := range c.hits[op.key] {
			seen = append(seen, s)
			ok = ok || (s >= 200 && s < 300)
		}
		sort.Ints(seen)
		if !ok {
			c.t.Errorf("%s: no request got a success (statuses seen: %v)", op.key, seen)
		}
		if op.secure && !c.hits[op.key][http.StatusUnauthorized] {
			c.t.Errorf("%s: no request checked its 401", op.key)
		}
		c.t.Logf("%-45s %v", op.key, seen)
	}
}

// fill puts sample values in a path template, for requests sent to every operation.
func fill(path string, values map[string]string) string {
	for k, v := range values {
		path = strings.ReplaceAll(path, "{"+k+"}", v)
	}
	return path
}

func TestOpenAPIMatchesTheServer(t *testing.T) {
	srv := servertest.InProcess(t, servertest.InProcessOptions{})
	base := srv.URL

	// The document served is the file in the repository, byte for byte.
	resp, err := http.Get(base + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	served, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	onDisk, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(served, onDisk) {
		t.Fatalf("GET /openapi.json (%d bytes) is not openapi.json (%d bytes)", len(served), len(onDisk))
	}
	c := newAPICheck(t, served)
	admin := srv.Admin
	do := func(k call) answer { t.Helper(); return c.do(base, k) }
	j := func(v any) []byte { b, _ := json.Marshal(v); return b }
	jsonCT := []string{"Content-Type", "application/json"}
	textCT := []string{"Content-Type", "text/plain; charset=utf-8"}

	// The server: no token needed.
	do(call{method: "GET", path: "/healthz", want: 200})
	do(call{method: "GET", path: "/metrics", want: 200})
	do(call{method: "GET", path: "/openapi.json", want: 200})

	// Rooms.
	room := do(call{method: "POST", path: "/v1/rooms", token: admin, header: jsonCT, want: 201,
		body: j(map[string]any{"name": "team", "policy": servertest.Generous()})})
	var created struct {
		Name   string
		Policy struct{ Format string }
	}
	room.json(t, &created)
	if created.Name != "team" || created.Policy.Format != "strict" {
		t.Errorf("created room: %s", room.body)
	}
	// tight lets a seat post once a minute; small takes messages of 200 bytes at most.
	do(call{method: "POST", path: "/v1/rooms", token: admin, header: jsonCT, want: 201,
		body: j(map[string]any{"name": "tight", "policy": map[string]any{"seat_burst": 1, "seat_messages_per_minute": 1}})})
	do(call{method: "POST", path: "/v1/rooms", token: admin, header: jsonCT, want: 201,
		body: j(map[string]any{"name": "small", "policy": map[string]any{"max_message_bytes": 200}})})
	do(call{method: "POST", path: "/v1/rooms", token: admin, header: jsonCT, body: j(map[string]any{"name": "team"}), want: 409})
	do(call{method: "POST", path: "/v1/rooms", token: admin, header: jsonCT, body: []byte(`{"name":`), want: 400, badRequest: true})
	do(call{method: "POST", path: "/v1/rooms", token: admin, header: jsonCT, body: []byte(`{"name":"x","colour":"red"}`), want: 400, badRequest: true})
	do(call{method: "POST", path: "/v1/rooms", token: admin, header: jsonCT, body: j(map[string]any{"name": "no spaces allowed"}), want: 422})
	do(call{method: "GET", path: "/v1/rooms", token: admin, want: 200})
	do(call{method: "GET", path: "/v1/rooms/team", token: admin, want: 200})
	do(call{method: "GET", path: "/v1/rooms/nowhere", token: admin, want: 404})
	do(call{method: "PATCH", path: "/v1/rooms/team", token: admin, header: jsonCT, body: j(map[string]any{"dedup_messages": 400}), want: 200})
	do(call{method: "PATCH", path: "/v1/rooms/team", token: admin, header: jsonCT, body: []byte(`[1,2]`), want: 400, badRequest: true})
	do(call{method: "PATCH", path: "/v1/rooms/team", token: admin, header: jsonCT, body: j(map[string]any{"max_message_bytes": -5}), want: 422})

	// Seats.
	tokens := map[string]string{}
	for _, s := range []struct{ name, role string }{{"lead", "agent"}, {"builder", "agent"}, {"yu", "human"}, {"ci", "runner"}} {
		a := do(call{method: "POST", path: "/v1/rooms/team/seats", token: admin, header: jsonCT, body: j(map[string]any{"name": s.name, "role": s.role}), want: 201})
		var st struct{ Token string }
		a.json(t, &st)
		tokens[s.name] = st.Token
	}
	a := do(call{method: "POST", path: "/v1/rooms/tight/seats", token: admin, header: jsonCT, body: j(map[string]any{"name": "solo"}), want: 201})
	var solo struct{ Token string }
	a.json(t, &solo)
	a = do(call{method: "POST", path: "/v1/rooms/small/seats", token: admin, header: jsonCT, body: j(map[string]any{"name": "brief"}), want: 201})
	var brief struct{ Token string }
	a.json(t, &brief)
	lead, builder, yu, ci := tokens["lead"], tokens["builder"], tokens["yu"], tokens["ci"]
	do(call{method: "POST", path: "/v1/rooms/team/seats", token: admin, header: jsonCT, body: j(map[string]any{"name": "lead"}), want: 409})
	do(call{method: "POST", path: "/v1/rooms/team/seats", token: lead, header: jsonCT, body: j(map[string]any{"name": "intruder"}), want: 403})
	do(call{method: "POST", path: "/v1/rooms/team/seats", token: admin, header: jsonCT, body: j(map[string]any{"name": "x", "role": "king"}), want: 422, badRequest: true})
	do(call{method: "GET", path: "/v1/rooms/team/seats", token: lead, want: 200})
	do(call{method: "GET", path: "/v1/rooms/team/seats", token: solo.Token, want: 403})
	rot := do(call{method: "POST", path: "/v1/rooms/team/seats/builder/rotate", token: admin, want: 200})
	var rotated struct{ Token, Role string }
	rot.json(t, &rotated)
	if rotated.Role != "agent" || rotated.Token == builder {
		t.Errorf("rotate: %s", rot.body)
	}
	do(call{method: "GET", path: "/v1/rooms/team", token: builder, want: 401}) // the old token
	builder = rotated.Token
	do(call{method: "POST", path: "/v1/rooms/team/seats/nobody/rotate", token: admin, want: 404})

	// Posts.
	report := "v1 report limiter to lead n=2\ndone limiter lib/rate-limit.ts sliding window\nopt Redis counters in the existing Upstash\n"
	p := do(call{method: "POST", path: "/v1/rooms/team/messages", token: builder, header: textCT, body: []byte(report), want: 201})
	var posted struct{ Seq int64 }
	p.json(t, &posted)
	if posted.Seq != 1 {
		t.Errorf("first post: %s", p.body)
	}
	ask := "v1 request limiter to yu n=2\nask merge the limiter?, 20991231T1200Z\ndefault silence past the ask time→merge\n"
	key := []string{"Content-Type", "text/plain", "Idempotency-Key", "7d0f3c1e-ask"}
	do(call{method: "POST", path: "/v1/rooms/team/messages", token: builder, header: key, body: []byte(ask), want: 201})
	replay := do(call{method: "POST", path: "/v1/rooms/team/messages", token: builder, header: key, body: []byte(ask), want: 200})
	if replay.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: no Idempotent-Replayed header")
	}
	do(call{method: "POST", path: "/v1/rooms/team/messages", token: builder, header: textCT, body: []byte(report), want: 409})
	do(call{method: "POST", path: "/v1/rooms/team/messages", token: builder, header: textCT, want: 422,
		body: []byte("v1 report limiter to lead n=5\ndone limiter merged\n")})
	do(call{method: "POST", path: "/v1/rooms/team/messages", token: builder, want: 400, badRequest: true,
		header: []string{"Content-Type", "text/plain", "Idempotency-Key", strings.Repeat("k", 300)}, body: []byte(report)})
	do(call{method: "POST", path: "/v1/rooms/team/messages", token: solo.Token, header: textCT, body: []byte(report), want: 403})
	do(call{method: "POST", path: "/v1/rooms/small/messages", token: brief.Token, header: textCT, want: 413,
		body: []byte("v1 report big to all n=1\nclaim " + strings.Repeat("a", 300) + "\n")})
	do(call{method: "POST", path: "/v1/rooms/tight/messages", token: solo.Token, header: textCT, body: []byte("v1 report a to all n=1\nclaim one\n"), want: 201})
	limited := do(call{method: "POST", path: "/v1/rooms/tight/messages", token: solo.Token, header: textCT, body: []byte("v1 report b to all n=1\nclaim two\n"), want: 429})
	if s, err := strconv.Atoi(limited.header.Get("Retry-After")); err != nil || s < 1 {
		t.Errorf("429 without a usable Retry-After: %q", limited.header.Get("Retry-After"))
	}

	// Reading.
	h := do(call{method: "GET", path: "/v1/rooms/team/history?after=0", token: yu, want: 200})
	if !strings.HasPrefix(string(h.body), "#1 builder ") || !strings.Contains(string(h.body), report) {
		t.Errorf("history:\n%s", h.body)
	}
	do(call{method: "GET", path: "/v1/rooms/team/history?after=1", token: yu, header: []string{"If-None-Match", h.header.Get("ETag")}, want: 200})
	do(call{method: "GET", path: "/v1/rooms/team/history", token: yu, header: []string{"If-None-Match", h.header.Get("ETag")}, want: 304})
	full := do(call{method: "GET", path: "/v1/rooms/team/history?after=0&limit=1", token: yu, want: 200})
	if full.header.Get("X-Parley-Next-After") != "1" {
		t.Errorf("a full page of one message: X-Parley-Next-After %q, want 1", full.header.Get("X-Parley-Next-After"))
	}
	do(call{method: "GET", path: "/v1/rooms/team/history?after=soon", token: yu, want: 400, badRequest: true})
	do(call{method: "GET", path: "/v1/rooms/team/history?limit=20000", token: yu, want: 400, badRequest: true})
	do(call{method: "GET", path: "/v1/rooms/team/history", token: solo.Token, want: 403})
	do(call{method: "GET", path: "/v1/rooms/team/messages?after=0&limit=10", token: yu, want: 200})
	m := do(call{method: "GET", path: "/v1/rooms/team/messages?after=latest", token: yu, want: 200})
	var msgs struct {
		Messages []struct{ Seq int64 }
		LastSeq  int64 `json:"last_seq"`
	}
	m.json(t, &msgs)
	if msgs.LastSeq != 2 || len(msgs.Messages) != 2 {
		t.Errorf("messages?after=latest: %s", m.body)
	}
	do(call{method: "GET", path: "/v1/rooms/team/messages?after=first", token: yu, want: 400, badRequest: true})
	endOf2 := "data: default silence past the ask time→merge\ndata: \n\n"
	ev := c.stream(base, call{method: "GET", path: "/v1/rooms/team/events?after=1", token: yu, want: 200}, endOf2)
	if !strings.Contains(string(ev.body), "id: 2\nevent: message\ndata: #2 builder ") {
		t.Errorf("events:\n%s", ev.body)
	}
	c.stream(base, call{method: "GET", path: "/v1/rooms/team/events", token: yu, header: []string{"Last-Event-ID", "1"}, want: 200}, endOf2)
	do(call{method: "GET", path: "/v1/rooms/team/events", token: yu, header: []string{"Last-Event-ID", "two"}, want: 400, badRequest: true})
	do(call{method: "GET", path: "/v1/rooms/team/events?after=-1", token: yu, want: 400, badRequest: true})

	// Coordination.
	in := do(call{method: "GET", path: "/v1/rooms/team/inbox", token: yu, want: 200})
	if !strings.Contains(string(in.body), "merge the limiter?") || !strings.HasPrefix(in.header.Get("Content-Type"), "text/plain") {
		t.Errorf("inbox text:\n%s", in.body)
	}
	inj := do(call{method: "GET", path: "/v1/rooms/team/inbox", token: yu, header: []string{"Accept", "application/json"}, want: 200})
	var inbox struct{ Unanswered []struct{ Seq int64 } }
	inj.json(t, &inbox)
	if len(inbox.Unanswered) != 1 || inbox.Unanswered[0].Seq != 2 {
		t.Errorf("inbox JSON: %s", inj.body)
	}
	do(call{method: "GET", path: "/v1/rooms/team/state/limiter", token: lead, want: 200})
	do(call{method: "GET", path: "/v1/rooms/team/state/limiter", token: lead, header: []string{"Accept", "application/json"}, want: 200})
	do(call{method: "GET", path: "/v1/rooms/team/state/limiter", token: solo.Token, want: 403})
	do(call{method: "POST", path: "/v1/rooms/team/runs", token: ci, header: jsonCT, body: j(map[string]any{"id": "r1", "commit": "3f9a2c1", "passed": 12, "failed": 0}), want: 201})
	goTest := `{"Action":"pass","Package":"example.com/lim","Test":"TestLimit"}` + "\n" + `{"Action":"pass","Package":"example.com/lim"}` + "\n"
	do(call{method: "POST", path: "/v1/rooms/team/runs?id=r2", token: ci, header: []string{"Content-Type", "application/x-ndjson"}, body: []byte(goTest), want: 201})
	junit := `<testsuite name="lim" tests="2" failures="1"><testcase name="a"/><testcase name="b"><failure message="x"/></testcase></testsuite>`
	do(call{method: "POST", path: "/v1/rooms/team/runs?id=r3", token: ci, header: []string{"Content-Type", "application/xml"}, body: []byte(junit), want: 201})
	do(call{method: "POST", path: "/v1/rooms/team/runs", token: lead, header: jsonCT, body: j(map[string]any{"id": "r4", "passed": 1, "failed": 0}), want: 403})
	do(call{method: "POST", path: "/v1/rooms/team/runs", token: ci, header: jsonCT, body: j(map[string]any{"id": "r1", "passed": 1, "failed": 0}), want: 409})
	do(call{method: "POST", path: "/v1/rooms/team/runs", token: ci, header: jsonCT, body: []byte(`{"passed":"many"}`), want: 422, badRequest: true})
	do(call{method: "GET", path: "/v1/rooms/team/stats", token: lead, want: 200})
	lint := do(call{method: "POST", path: "/v1/rooms/team/lint", token: lead, header: textCT, body: []byte("v1 report limiter to lead n=3\ndone limiter merged\n"), want: 200})
	var linted struct{ Diagnostics []struct{ Code string } }
	lint.json(t, &linted)
	if len(linted.Diagnostics) == 0 {
		t.Errorf("lint of a wrong n: no diagnostics: %s", lint.body)
	}
	do(call{method: "POST", path: "/v1/rooms/team/lint", token: lead, header: textCT, body: bytes.Repeat([]byte("a"), 2<<20), want: 413})

	// Export, and import into a second server.
	exp := do(call{method: "GET", path: "/v1/rooms/team/export", token: admin, want: 200})
	do(call{method: "GET", path: "/v1/rooms/team/export", token: lead, want: 403})
	do(call{method: "GET", path: "/v1/rooms/nowhere/export", token: admin, want: 404})
	ndjson := []string{"Content-Type", "application/x-ndjson"}
	do(call{method: "POST", path: "/v1/rooms/import", token: admin, header: ndjson, body: exp.body, want: 409})
	do(call{method: "POST", path: "/v1/rooms/import", token: lead, header: ndjson, body: exp.body, want: 403})
	do(call{method: "POST", path: "/v1/rooms/import", token: admin, header: ndjson, body: []byte("{\"kind\":\"nonsense\"}\n"), want: 422})
	other := servertest.InProcess(t, servertest.InProcessOptions{})
	imp := do(call{method: "POST", path: "/v1/rooms/import", token: other.Admin, header: ndjson, body: exp.body, want: 201, base: other.URL})
	var imported struct {
		LastSeq int64 `json:"last_seq"`
	}
	imp.json(t, &imported)
	if imported.LastSeq != 2 {
		t.Errorf("import: %s", imp.body)
	}

	// Revocation, last: the seat's token stops working.
	do(call{method: "DELETE", path: "/v1/rooms/team/seats/yu", token: lead, want: 403})
	do(call{method: "DELETE", path: "/v1/rooms/team/seats/yu", token: admin, want: 204})
	do(call{method: "DELETE", path: "/v1/rooms/team/seats/nobody", token: admin, want: 404})
	do(call{method: "GET", path: "/v1/rooms/team/inbox", token: yu, want: 401})

	// Every operation that needs a token refuses none (which the document says is wrong
	// too), and a token that is not a seat's.
	sample := map[string]string{"room": "team", "seat": "lead", "topic": "limiter"}
	for _, op := range c.ops {
		if !op.secure || op.key == searchOp {
			continue
		}
		method, path, _ := strings.Cut(op.key, " ")
		path = fill(path, sample)
		do(call{method: method, path: path, want: 401, badRequest: true, header: textCT})
		do(call{method: method, path: path, token: "pk_not_a_real_token_at_all", want: 401, anyRequest: true, header: textCT})
	}
	c.coverage(searchOp)
}

// TestOpenAPIStructuredPostAndSearch checks the routes and forms of issue 13 that another
// branch implements (shapes.md): the JSON post and search.
func TestOpenAPIStructuredPostAndSearch(t *testing.T) {
	srv := servertest.InProcess(t, servertest.InProcessOptions{})
	spec, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	c := newAPICheck(t, spec)
	do := func(k call) answer { t.Helper(); return c.do(srv.URL, k) }
	srv.CreateRoom(t, "team", servertest.Generous())
	lead := srv.AddSeat(t, "team", "lead", "agent")
	builder := srv.AddSeat(t, "team", "builder", "agent")
	srv.CreateRoom(t, "other", nil)
	stranger := srv.AddSeat(t, "other", "x", "agent")
	jsonCT := []string{"Content-Type", "application/json"}

	structured := `{"intent":"report","topic":"limiter","to":["lead"],"lines":["done limiter Redis sliding window","risk Redis latency under load"]}`
	p := do(call{method: "POST", path: "/v1/rooms/team/messages", token: builder, header: jsonCT, body: []byte(structured), want: 201})
	var posted struct{ Seq int64 }
	p.json(t, &posted)
	want := "v1 report limiter to lead n=2\ndone limiter Redis sliding window\nrisk Redis latency under load\n"
	if h := srv.History(t, "team", lead); !strings.Contains(h, want) {
		t.Errorf("structured post #%d: history does not hold the rendered text %q:\n%s", posted.Seq, want, h)
	}
	do(call{method: "POST", path: "/v1/rooms/team/messages", token: lead, header: jsonCT, want: 201,
		body: []byte(`{"intent":"answer","topic":"limiter","to":["builder"],"re":1,"lines":["decide keep Redis"]}`)})
	do(call{method: "POST", path: "/v1/rooms/team/messages", token: lead, header: jsonCT, want: 201,
		body: []byte(`{"body":"v1 report cache to builder n=1\nclaim cache warmed\n"}`)})
	do(call{method: "POST", path: "/v1/rooms/team/messages", token: lead, header: jsonCT, want: 0, badRequest: true,
		body: []byte(`{"intent":"report","topic":"limiter","to":[],"lines":["x"]}`)})
	do(call{method: "POST", path: "/v1/rooms/team/messages", token: lead, header: jsonCT, want: 400, badRequest: true,
		body: []byte(`{"intent":"report","topic":`)})

	s := do(call{method: "GET", path: "/v1/rooms/team/search?q=redis&limit=5", token: lead, want: 200})
	var found struct {
		Results []struct{ Seq int64 }
	}
	s.json(t, &found)
	if len(found.Results) != 2 {
		t.Errorf("search for redis: %s", s.body)
	}
	do(call{method: "GET", path: "/v1/rooms/team/search?q=", token: lead, want: 400, badRequest: true})
	do(call{method: "GET", path: "/v1/rooms/team/search?q=redis&limit=1000", token: lead, want: 400, badRequest: true})
	do(call{method: "GET", path: "/v1/rooms/team/search?q=redis", want: 401, badRequest: true})
	do(call{method: "GET", path: "/v1/rooms/team/search?q=redis", token: stranger, want: 403})
	do(call{method: "GET", path: "/v1/rooms/nowhere/search?q=redis", token: srv.Admin, want: 404})
	for _, status := range []int{200, 400, 401, 403, 404} {
		if !c.hits[searchOp][status] {
			t.Errorf("%s: %d was not checked", searchOp, status)
		}
	}
}
