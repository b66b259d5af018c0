package web_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/sqlitetest"
	"github.com/parleyhq/parley/internal/storecount"
	"github.com/parleyhq/parley/room"
	"github.com/parleyhq/parley/sqlite"
	"github.com/parleyhq/parley/web"
)

const adminToken = "admin-token-for-web-tests-0123456789"

// fixture is the web UI over a real room service on a real SQLite file, on 127.0.0.1.
type fixture struct {
	svc    *room.Service
	raw    *sqlite.Store     // the store itself
	count  *storecount.Store // the store as the service sees it: calls counted
	admin  *parley.Caller
	tokens map[string]string
	url    string
}

func newFixture(t *testing.T, opts web.Options) *fixture {
	t.Helper()
	return newFixtureRepo(t, opts, "")
}

// newFixtureRepo is newFixture with gitRepo as the repository `ev commit` lines are checked
// against.
func newFixtureRepo(t *testing.T, opts web.Options, gitRepo string) *fixture {
	t.Helper()
	ctx := t.Context()
	store := sqlitetest.Open(t)
	count := storecount.New(store)
	svc, err := room.New(count, room.Config{AdminToken: adminToken, GitRepo: gitRepo, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	admin, err := svc.Authenticate(ctx, adminToken)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{svc: svc, raw: store, count: count, admin: admin, tokens: map[string]string{}}
	for _, r := range []string{"limiter", "other"} {
		if _, err := svc.CreateRoom(ctx, admin, r, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []struct {
		room, name string
		role       parley.Role
	}{{"limiter", "lead", parley.RoleAgent}, {"limiter", "builder", parley.RoleAgent}, {"limiter", "yu", parley.RoleHuman}, {"other", "cy", parley.RoleAgent}} {
		_, tok, err := svc.AddSeat(ctx, admin, s.room, s.name, s.role)
		if err != nil {
			t.Fatal(err)
		}
		f.tokens[s.name] = tok
	}
	srv := httptest.NewServer(web.NewHandler(svc, slog.New(slog.DiscardHandler), opts))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

// post posts body as seat into the seat's room.
func (f *fixture) post(t *testing.T, seat, body string) int64 {
	t.Helper()
	c, err := f.svc.Authenticate(t.Context(), f.tokens[seat])
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.svc.Post(t.Context(), c, c.Seat.Room, []byte(body), "")
	if err != nil {
		t.Fatalf("post as %s: %v", seat, err)
	}
	return res.Seq
}

// browser is an HTTP client with a cookie jar that does not follow redirects, so tests see
// every status and Set-Cookie.
type browser struct {
	t    *testing.T
	base string
	c    *http.Client
}

func (f *fixture) browser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: f.url, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

func (b *browser) do(method, path string, form url.Values, header map[string]string) (*http.Response, string) {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(b.t.Context(), method, b.base+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, string(out)
}

func (b *browser) get(path string) (*http.Response, string) { return b.do("GET", path, nil, nil) }

func (b *browser) signIn(token string) *http.Response {
	b.t.Helper()
	resp, _ := b.do("POST", "/signin", url.Values{"token": {token}, "next": {"/"}}, nil)
	return resp
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t *testing.T, page string) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no csrf field in the page")
	}
	return m[1]
}

const request = `v1 request limiter to builder n=3
req rate limit POST /api/search: 60 req/min per API key
must-not push to main
ask accept or decline, 20301201T1800Z
`

func TestSignInFlow(t *testing.T) {
	f := newFixture(t, web.Options{})
	f.post(t, "lead", request)
	b := f.browser(t)

	resp, body := b.get("/rooms/limiter")
	if resp.StatusCode != 401 || !strings.Contains(body, `<form method="post" action="/signin"`) {
		t.Fatalf("signed out: status %d, want 401 with the sign-in form", resp.StatusCode)
	}
	if strings.Contains(body, "rate limit POST") {
		t.Error("the transcript leaked to a signed-out browser")
	}

	resp = b.signIn("not-a-token")
	if resp.StatusCode != 401 || len(resp.Cookies()) != 0 {
		t.Fatalf("bad token: status %d, cookies %v", resp.StatusCode, resp.Cookies())
	}

	resp = b.signIn(f.tokens["builder"])
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/rooms/limiter" {
		t.Fatalf("sign in: status %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	cks := resp.Cookies()
	if len(cks) != 1 {
		t.Fatalf("cookies: %v", cks)
	}
	ck := cks[0]
	if ck.Name != "parley_session" || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/" {
		t.Errorf("session cookie %+v: want HttpOnly, SameSite=Strict, Path=/", ck)
	}
	if ck.Value == f.tokens["builder"] || strings.Contains(ck.Value, f.tokens["builder"]) || len(ck.Value) < 40 {
		t.Errorf("the cookie holds the token or a short id: %q", ck.Value)
	}

	resp, body = b.get("/rooms/limiter")
	if resp.StatusCode != 200 {
		t.Fatalf("room page: %d", resp.StatusCode)
	}
	for _, want := range []string{`id="m1"`, "rate limit POST /api/search", `class="ln k-req"`, `<span class="mod">must-not</span>`,
		`aria-live="polite"`, `href="#main"`, "Signed in as <strong>builder @ limiter</strong>", "You owe (1)"} {
		if !strings.Contains(body, want) {
			t.Errorf("room page lacks %q", want)
		}
	}
	if strings.Contains(body, f.tokens["builder"]) {
		t.Error("the token appears in the page")
	}

	// Sign out needs the session's CSRF token.
	resp, _ = b.do("POST", "/signout", url.Values{}, nil)
	if resp.StatusCode != 403 {
		t.Errorf("sign out without csrf: %d, want 403", resp.StatusCode)
	}
	resp, _ = b.do("POST", "/signout", url.Values{"csrf": {csrfOf(t, body)}}, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out: %d", resp.StatusCode)
	}
	if resp, _ = b.get("/rooms/limiter"); resp.StatusCode != 401 {
		t.Errorf("after sign out: %d, want 401", resp.StatusCode)
	}
	// The old cookie is dead on the server too, not only deleted in this browser.
	replay := f.browser(t)
	u, _ := url.Parse(f.url)
	replay.c.Jar.SetCookies(u, []*http.Cookie{{Name: ck.Name, Value: ck.Value}})
	if resp, _ = replay.get("/rooms/limiter"); resp.StatusCode != 401 {
		t.Errorf("replayed session cookie after sign out: %d, want 401", resp.StatusCode)
	}
}

func TestSecureCookie(t *testing.T) {
	f := newFixture(t, web.Options{Secure: true})
	resp := f.browser(t).signIn(f.tokens["yu"])
	if cks := resp.Cookies(); len(cks) != 1 || !cks[0].Secure {
		t.Errorf("Options.Secure: cookies %v", cks)
	}
}

func TestAccess(t *testing.T) {
	f := newFixture(t, web.Options{})
	seat, admin := f.browser(t), f.browser(t)
	seat.signIn(f.tokens["builder"])
	admin.signIn(adminToken)
	for _, tc := range []struct {
		b      *browser
		path   string
		status int
		want   string
	}{
		{seat, "/", 200, `href="/rooms/limiter"`},
		{seat, "/rooms/other", 403, "error"},
		{seat, "/rooms/other/state", 403, ""},
		{seat, "/rooms/other/stats", 403, ""},
		{seat, "/ui/rooms/other/events", 403, ""},
		{admin, "/", 200, `href="/rooms/other"`},
		{admin, "/rooms/other", 200, "Transcript"},
		{admin, "/rooms/nope", 404, ""},
		{f.browser(t), "/ui/rooms/limiter/events", 401, ""},
		{f.browser(t), "/rooms/limiter/stats", 401, "Sign in"},
	} {
		resp, body := tc.b.get(tc.path)
		if resp.StatusCode != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("GET %s: %d, want %d with %q", tc.path, resp.StatusCode, tc.status, tc.want)
		}
	}
	// Seats see only their own room in the list.
	if _, body := seat.get("/"); strings.Contains(body, "/rooms/other") {
		t.Error("a seat's room list shows another room")
	}
	// An admin has no seat: no inbox, no post form.
	if _, body := admin.get("/rooms/limiter"); strings.Contains(body, `action="/rooms/limiter/post"`) {
		t.Error("the admin is offered a post form")
	}
}

func TestRevokedSeatIsSignedOut(t *testing.T) {
	f := newFixture(t, web.Options{})
	b := f.browser(t)
	b.signIn(f.tokens["yu"])
	if resp, _ := b.get("/rooms/limiter"); resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	if err := f.svc.RevokeSeat(t.Context(), f.admin, "limiter", "yu"); err != nil {
		t.Fatal(err)
	}
	if resp, _ := b.get("/rooms/limiter"); resp.StatusCode != 401 {
		t.Errorf("after revocation: %d, want 401", resp.StatusCode)
	}
}

// Message text is data: whatever a seat writes reaches the page escaped.
func TestEscaping(t *testing.T) {
	f := newFixture(t, web.Options{})
	evil := "v1 note limiter to all n=2\noutcome <script>alert(1)</script> & \"quoted\" <img src=x onerror=alert(2)>\nreason </textarea><b>bold</b>\n"
	f.post(t, "builder", evil)
	b := f.browser(t)
	b.signIn(f.tokens["yu"])
	_, body := b.get("/rooms/limiter")
	for _, bad := range []string{"<script>alert", "<img src=x", "<b>bold</b>", "</textarea><b>"} {
		if strings.Contains(body, bad) {
			t.Errorf("unescaped message text %q in the page", bad)
		}
	}
	if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &#34;quoted&#34;") {
		t.Error("the escaped text is missing")
	}
	if csp := headerOf(t, b, "/rooms/limiter", "Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
}

func headerOf(t *testing.T, b *browser, path, name string) string {
	resp, _ := b.get(path)
	return resp.Header.Get(name)
}

func TestPostForm(t *testing.T) {
	f := newFixture(t, web.Options{})
	f.post(t, "lead", request)
	b := f.browser(t)
	b.signIn(f.tokens["yu"])
	_, page := b.get("/rooms/limiter")
	csrf := csrfOf(t, page)
	keyRE := regexp.MustCompile(`name="key" value="([^"]+)"`)
	key := keyRE.FindStringSubmatch(page)[1]

	// Without the CSRF token: refused, nothing posted.
	resp, _ := b.do("POST", "/rooms/limiter/post", url.Values{"body": {"v1 note limiter to all n=1\noutcome x\n"}}, nil)
	if resp.StatusCode != 403 {
		t.Errorf("post without csrf: %d", resp.StatusCode)
	}
	// A refusal redirects back to the room (POST/redirect/GET: a reload does not post again),
	// and the room page shows the draft again with the server's findings, once.
	resp, _ = b.do("POST", "/rooms/limiter/post", url.Values{"csrf": {csrf}, "key": {key},
		"body": {"v1 answer limiter to lead re 1 n=3\r\noutcome accepted\r\n"}}, nil)
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/rooms/limiter#") {
		t.Fatalf("refused post: %d %q, want a 303 back to the room", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, body := b.get(resp.Header.Get("Location"))
	if resp.StatusCode != 200 || !strings.Contains(body, "n-mismatch") || !strings.Contains(body, `role="alert"`) ||
		!regexp.MustCompile(`(?s)<textarea[^>]*>v1 answer limiter to lead re 1 n=3\s+outcome accepted\s*</textarea>`).MatchString(body) {
		t.Errorf("the room after a refused post: %d\n%s", resp.StatusCode, body)
	}
	if _, again := b.get("/rooms/limiter"); strings.Contains(again, "n-mismatch") || strings.Contains(again, "outcome accepted</textarea>") {
		t.Error("the refusal is shown again on the next view")
	}
	// The draft is kept for this browser's session only: another session signed in as the
	// same seat does not see it.
	{
		resp, _ := b.do("POST", "/rooms/limiter/post", url.Values{"csrf": {csrf}, "key": {key},
			"body": {"v1 answer limiter to lead re 1 n=3\nsecret draft\n"}}, nil)
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("second refused post: %d", resp.StatusCode)
		}
		other := f.browser(t)
		other.signIn(f.tokens["yu"])
		if _, page := other.get("/rooms/limiter"); strings.Contains(page, "secret draft") {
			t.Error("another session sees the draft")
		}
		b.get("/rooms/limiter") // take it
	}
	// A good post, with CRLF lines from the textarea.
	resp, _ = b.do("POST", "/rooms/limiter/post", url.Values{"csrf": {csrf}, "key": {key},
		"body": {"v1 answer limiter to lead re 1 n=1\r\noutcome accepted\r\n"}}, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/rooms/limiter#m2" {
		t.Fatalf("post: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	// The same form submitted twice posts once.
	resp, _ = b.do("POST", "/rooms/limiter/post", url.Values{"csrf": {csrf}, "key": {key},
		"body": {"v1 answer limiter to lead re 1 n=1\r\noutcome accepted\r\n"}}, nil)
	if resp.Header.Get("Location") != "/rooms/limiter#m2" {
		t.Errorf("resubmitted form: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	hist, last, err := f.svc.History(t.Context(), f.admin, "limiter", 1, 0)
	if err != nil || last != 2 || !strings.Contains(string(hist), "#2 yu ") || strings.Contains(string(hist), "\r") {
		t.Errorf("history: last %d %q %v", last, hist, err)
	}
	// A cross-origin form post is refused before anything else.
	resp, _ = b.do("POST", "/rooms/limiter/post", url.Values{"csrf": {csrf}, "body": {"x"}},
		map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"})
	if resp.StatusCode != 403 {
		t.Errorf("cross-origin post: %d", resp.StatusCode)
	}
	resp, _ = f.browser(t).do("POST", "/signin", url.Values{"token": {f.tokens["yu"]}},
		map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"})
	if resp.StatusCode != 403 || len(resp.Cookies()) != 0 {
		t.Errorf("cross-origin sign-in: %d", resp.StatusCode)
	}
}

func TestStateAndStatsPages(t *testing.T) {
	f := newFixture(t, web.Options{})
	f.post(t, "lead", request)
	f.post(t, "builder", "v1 report limiter to lead re 1 n=3\ndone limiter in lib/rate.go\nclaim 12 unit tests pass\ntodo wire the 429 path\n")
	b := f.browser(t)
	b.signIn(f.tokens["lead"])
	resp, body := b.get("/rooms/limiter/state")
	if resp.StatusCode != 200 || !strings.Contains(body, `id="st-limiter"`) || !strings.Contains(body, "wire the 429 path") {
		t.Errorf("state page: %d\n%s", resp.StatusCode, body)
	}
	resp, body = b.get("/rooms/limiter/stats")
	if resp.StatusCode != 200 || !strings.Contains(body, "<svg") || !strings.Contains(body, "Tokens posted, by seat") ||
		!strings.Contains(body, ">builder</text>") {
		t.Errorf("stats page: %d\n%s", resp.StatusCode, body)
	}
}

// The live stream without a browser: one event per message, as rendered HTML, escaped.
func TestEvents(t *testing.T) {
	f := newFixture(t, web.Options{Heartbeat: time.Hour})
	f.post(t, "lead", request)
	b := f.browser(t)
	b.signIn(f.tokens["builder"])
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.url+"/ui/rooms/limiter/events?after=0", nil)
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	r := bufio.NewReader(resp.Body)
	next := func() (id, data string) {
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("stream ended: %v", err)
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case strings.HasPrefix(line, "id: "):
				id = line[4:]
			case strings.HasPrefix(line, "data: "):
				data += line[6:] + "\n"
			case line == "" && id != "":
				return id, data
			}
		}
	}
	if id, data := next(); id != "1" || !strings.Contains(data, `<li class="msg" id="m1"`) {
		t.Errorf("first event: id %s\n%s", id, data)
	}
	f.post(t, "yu", "v1 note limiter to all n=1\noutcome <b>ok</b>\r\n")
	id, data := next()
	if id != "2" || !strings.Contains(data, "&lt;b&gt;ok&lt;/b&gt;") || strings.Contains(data, "<b>") {
		t.Errorf("live event: id %s\n%s", id, data)
	}
}

func TestTranscriptPages(t *testing.T) {
	f := newFixture(t, web.Options{TranscriptLimit: 2})
	for i := range 5 {
		f.post(t, "lead", "v1 note limiter to all n=1\noutcome step "+string(rune('a'+i))+"\n")
	}
	b := f.browser(t)
	b.signIn(f.tokens["lead"])
	_, body := b.get("/rooms/limiter")
	if !strings.Contains(body, `id="m4"`) || !strings.Contains(body, `id="m5"`) || strings.Contains(body, `id="m3"`) ||
		!strings.Contains(body, `href="/rooms/limiter?after=1">Earlier messages`) || !strings.Contains(body, "data-events=") {
		t.Errorf("latest page:\n%s", body)
	}
	_, body = b.get("/rooms/limiter?after=1")
	if !strings.Contains(body, `id="m2"`) || !strings.Contains(body, `id="m3"`) || strings.Contains(body, `id="m4"`) ||
		!strings.Contains(body, `href="/rooms/limiter?after=0">Earlier messages`) || !strings.Contains(body, "Latest messages") ||
		strings.Contains(body, "data-events=") {
		t.Errorf("earlier page:\n%s", body)
	}
}

// Options.Done ends live streams, so a graceful shutdown does not wait on them.
func TestEventsEndOnShutdown(t *testing.T) {
	done := make(chan struct{})
	f := newFixture(t, web.Options{Heartbeat: time.Hour, Done: done})
	b := f.browser(t)
	b.signIn(f.tokens["lead"])
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.url+"/ui/rooms/limiter/events", nil)
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	if line, _ := r.ReadString('\n'); line != "retry: 3000\n" {
		t.Fatalf("stream starts with %q", line)
	}
	close(done)
	if _, err := io.ReadAll(r); err != nil {
		t.Errorf("stream did not end cleanly: %v", err)
	}
	if ctx.Err() != nil {
		t.Error("stream outlived the shutdown")
	}
}

func TestFrontAndMissingPages(t *testing.T) {
	f := newFixture(t, web.Options{})
	b := f.browser(t)
	if resp, body := b.get("/"); resp.StatusCode != 200 || !strings.Contains(body, `id="token"`) || !strings.Contains(body, `<label for="token">`) {
		t.Errorf("front page signed out: %d", resp.StatusCode)
	}
	if resp, body := b.get("/no/such/page"); resp.StatusCode != 404 || !strings.Contains(body, "no page at this address") {
		t.Errorf("missing page: %d", resp.StatusCode)
	}
	// A sign-in link that tries to send the browser elsewhere afterwards stays on this site.
	_, body := b.get("/signin?next=//evil.example/x")
	if strings.Contains(body, "evil.example") {
		t.Error("the sign-in form carries a foreign next URL")
	}
	resp, _ := b.do("POST", "/signin", url.Values{"token": {adminToken}, "next": {"https://evil.example/"}}, nil)
	if loc := resp.Header.Get("Location"); loc != "/" {
		t.Errorf("sign-in redirects to %q", loc)
	}
}
