package web_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/parleyhq/parley/internal/browsertest"
	"github.com/parleyhq/parley/web"
)

// newBrowser starts a fresh headless Chromium with its own profile and returns a tab.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	return browsertest.New(t, chromedp.Flag("force-color-profile", "srgb"), chromedp.Flag("hide-scrollbars", true))
}

// tab is a browser tab and the test that drives it.
type tab struct {
	t   *testing.T
	ctx context.Context
}

// step runs actions, failing the test with name when they fail or take over 20 s.
func (b tab) step(name string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	sctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(sctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", name, err)
	}
}

// eval evaluates js in the page and returns its string value, failing the test on error.
func (b tab) eval(js string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		b.t.Fatalf("%s: %v", js, err)
	}
	return s
}

// signIn opens the room page at url, signs in with token through the form and waits until
// the message shown by the selector last is visible.
func (b tab) signIn(url, token, last string) {
	b.t.Helper()
	b.step("sign in",
		chromedp.Navigate(url),
		chromedp.WaitVisible("#token"),
		chromedp.SendKeys("#token", token),
		chromedp.Submit("#token"),
		chromedp.WaitVisible(last),
	)
}

// artifact writes b under $PARLEY_TEST_ARTIFACTS (or the test's temp dir) and logs where.
func artifact(t *testing.T, name string, b []byte) string {
	t.Helper()
	dir := os.Getenv("PARLEY_TEST_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("artifact: %s", p)
	return p
}

// seedRoom posts a short, realistic exchange that uses most modalities.
func seedRoom(t *testing.T, f *fixture) {
	t.Helper()
	f.post(t, "lead", `v1 request limiter to builder n=7
req rate limit POST /api/search: 60 req/min per API key
req 429 with Retry-After when exceeded
req tests for the limiter and the 429 path
deadline 20301219T1200Z
must-not push to main
ask accept or decline, 20301217T1800Z
default silence past the ask time→reassign to ops
`)
	f.post(t, "builder", `v1 answer limiter to lead re 1 n=2
outcome accepted
eta 20301218T1200Z
`)
	f.post(t, "builder", `v1 propose limiter to yu n=8
ask how to store rate-limit counters, 20301218T0900Z
opt/A Redis sliding window: exact, +1 hop per request
opt/B in-memory token bucket: no hop, inexact across instances
rec A
risk A Redis outage fails the endpoint closed
mit fail open with a logged warning when Redis is down
decider yu
default silence past the ask time→A with the fail-open
`)
	f.post(t, "builder", `v1 report limiter to lead n=4
done#1 sliding window in lib/rate-limit.go
ev#1 commit 3f9a2c1
claim 12 unit tests pass
todo wire the 429 path into the handler
`)
	// Reads and a refused repeat, so the stats page has something to draw: lead reads the
	// history twice from the start (the second read is a cache hit), builder once.
	for _, seat := range []string{"lead", "lead", "builder"} {
		c, err := f.svc.Authenticate(t.Context(), f.tokens[seat])
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.svc.History(t.Context(), c, "limiter", 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	c, _ := f.svc.Authenticate(t.Context(), f.tokens["builder"])
	if _, err := f.svc.Post(t.Context(), c, "limiter", []byte("v1 answer limiter to lead re 1 n=2\noutcome accepted\neta 20301218T1200Z\n"), ""); err == nil {
		t.Fatal("a repeat was stored")
	}
}

// TestBrowserLiveTranscript signs in through the form in a real Chromium, reads the
// transcript, and sees a message posted meanwhile appear without a reload.
func TestBrowserLiveTranscript(t *testing.T) {
	ctx := newBrowser(t)
	f := newFixture(t, web.Options{})
	seedRoom(t, f)

	step := tab{t, ctx}.step
	tab{t, ctx}.signIn(f.url+"/rooms/limiter", f.tokens["yu"], "#m4")
	if loc, _ := chromedp.Run(ctx, chromedp.Location()); strings.Contains(loc, f.tokens["yu"]) || !strings.HasSuffix(loc, "/rooms/limiter") {
		t.Errorf("after sign-in the browser is at %q", loc)
	}
	text, err := chromedp.Run(ctx, chromedp.Text("#m1"))
	if err != nil || !strings.Contains(text, "must-not") || !strings.Contains(text, "push to main") {
		t.Errorf("message #1 reads %q (%v)", text, err)
	}
	// Wait until the script has the stream open, then post from outside the browser.
	{
		pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		if _, err := chromedp.Run(pctx, chromedp.Poll[bool](`document.getElementById("live-status").classList.contains("on")`)); err != nil {
			t.Fatalf("the live stream did not open: %v", err)
		}
		cancel()
	}
	f.post(t, "yu", `v1 decide limiter to builder re 3 n=3
outcome A: Redis sliding window with the fail-open
reason correctness across instances beats 3ms
rec keep the bypass behind a flag
`)
	step("live message", chromedp.WaitVisible("#m5"))
	text, err = chromedp.Run(ctx, chromedp.Text("#m5"))
	if err != nil || !strings.Contains(text, "Redis sliding window") {
		t.Errorf("live message reads %q (%v)", text, err)
	}
	// No reload happened: the page still shows the script's status, which a fresh load resets.
	if status, _ := chromedp.Run(ctx, chromedp.Text("#live-status")); !strings.HasPrefix(status, "Live") {
		t.Errorf("status %q: the page reloaded or the stream closed", status)
	}

	if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](`window.scrollTo(0, 0)`)); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	artifact(t, "parley-room.png", png)
	// A copy where the lead looks for it.
	if err := os.WriteFile("/tmp/parley-room.png", png, 0o644); err != nil {
		t.Logf("copy to /tmp: %v", err)
	}

	// Keyboard: the first Tab lands on the skip link, which is visible when focused.
	step("skip link",
		chromedp.KeyEvent("\t"),
	)
	focused, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement.className + ":" + (document.activeElement.getBoundingClientRect().top >= 0)`))
	if focused != "skip:true" {
		t.Errorf("first Tab focuses %q, want the visible skip link", focused)
	}

	for _, p := range []struct{ path, wait, name string }{
		{"/rooms/limiter/state", "#st-limiter", "parley-state.png"},
		{"/rooms/limiter/stats", "#c-posted", "parley-stats.png"},
	} {
		step(p.path, chromedp.Navigate(f.url+p.path), chromedp.WaitVisible(p.wait))
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		artifact(t, p.name, png)
		if os.Getenv("PARLEY_TEST_ARTIFACTS") == "" {
			os.WriteFile("/tmp/"+p.name, png, 0o644)
		}
	}
}
