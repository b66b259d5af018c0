package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/parleyhq/parley/web"
)

// TestSignInNextStaysOnSite signs in with next= values that browsers read as another
// origin, raw and percent-encoded once or twice: every one lands on the default page, and
// the sign-in form never carries them. Same-site paths are kept.
func TestSignInNextStaysOnSite(t *testing.T) {
	f := newFixture(t, web.Options{})
	foreign := []string{
		"/\t/evil.example", "/%09/evil.example", "/%2509/evil.example", "/\n/evil.example", "/%0a/evil.example",
		"/\r/evil.example", "/%0d%0a/evil.example", "/\\evil.example", "/%5cevil.example", "/%255Cevil.example",
		"//evil.example", "/%2fevil.example", "/%2F/evil.example", "/%252F%252Fevil.example", "///evil.example",
		"https://evil.example", "http:/evil.example", "evil.example", "\\\\evil.example", " /x",
		"/rooms/limiter//evil", "/x\\..\\evil", "/\u200b/evil.example", "/%e2%80%8b/evil.example",
		"/%00/evil", "/%7f/evil", "/%c2%85/evil", "/%zz", "/" + strings.Repeat("a", 3000),
	}
	for _, next := range foreign {
		b := f.browser(t)
		resp, _ := b.do("POST", "/signin", url.Values{"token": {adminToken}, "next": {next}}, nil)
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("next=%q: sign in answered %d", next, resp.StatusCode)
		}
		if loc := resp.Header.Get("Location"); loc != "/" {
			t.Errorf("next=%q: redirected to %q, want /", next, loc)
		}
		_, body := b.get("/signin?next=" + url.QueryEscape(next))
		if strings.Contains(body, "evil") {
			t.Errorf("next=%q: the sign-in form carries it", next)
		}
	}
	for next, want := range map[string]string{
		"/rooms/limiter":           "/rooms/limiter",
		"/rooms/limiter/state?t=x": "/rooms/limiter/state?t=x",
		"/rooms/limiter%20x/stats": "/rooms/limiter%20x/stats",
		"/rooms/limiter#m3":        "/rooms/limiter#m3",
		"/":                        "/",
	} {
		b := f.browser(t)
		resp, _ := b.do("POST", "/signin", url.Values{"token": {adminToken}, "next": {next}}, nil)
		if loc := resp.Header.Get("Location"); loc != want {
			t.Errorf("next=%q: redirected to %q, want %q", next, loc, want)
		}
	}
}
