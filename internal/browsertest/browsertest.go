// Package browsertest starts the headless Chromium that the browser tests drive (the web UI,
// the format lab, sign-in behind a reverse proxy): Debian's chromium, a fresh profile per
// test, and the flags that keep it off a closed network. Without Chromium a test skips with
// how to get it, except under PARLEY_TEST_REQUIRE_ALL=1 (as in CI), where it fails.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
)

// Missing ends a test that lacks something it runs (a browser, a server binary): a skip
// with msg, or a failure under PARLEY_TEST_REQUIRE_ALL=1.
func Missing(tb testing.TB, msg string) {
	tb.Helper()
	if os.Getenv("PARLEY_TEST_REQUIRE_ALL") == "1" {
		tb.Fatal("PARLEY_TEST_REQUIRE_ALL=1 and " + msg)
	}
	tb.Skip(msg)
}

// Find returns the first of PARLEY_TEST_<env>, the paths given and name on PATH that
// exists, or ends the test through Missing with install as the way to get it.
func Find(tb testing.TB, name, env, install string, paths ...string) string {
	tb.Helper()
	for _, p := range append([]string{os.Getenv(env)}, paths...) {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	Missing(tb, "no "+name+": install it ("+install+") or set "+env)
	return ""
}

// Chromium returns the path of Debian's headless-capable Chromium (or PARLEY_TEST_CHROMIUM).
func Chromium(tb testing.TB) string {
	tb.Helper()
	return Find(tb, "chromium", "PARLEY_TEST_CHROMIUM", "apt-get install -y chromium", "/usr/bin/chromium", "/usr/bin/chromium-browser")
}

// New starts a fresh headless Chromium with its own profile, with extra options after the
// defaults, and returns a tab at a 1280×900 viewport; both end with the test.
func New(t *testing.T, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	opts := append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(Chromium(t)),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		// This machine's network is closed: background fetches would only fail, many at once.
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
	}, extra...)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	// The first Run starts the browser; it must not carry a timeout (see chromedp.Run).
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}
