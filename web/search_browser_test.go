package web_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parleyhq/parley/web"
)

// searchRoom posts three messages: two hold "redis", and #3 also "window".
func searchRoomFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t, web.Options{})
	f.post(t, "lead", "v1 note limiter to all n=1\nopt/A redis sliding window\n")
	f.post(t, "builder", "v1 note limiter to all n=1\nnothing to see here\n")
	f.post(t, "builder", "v1 note cache to all n=2\nredis cache warmed\nkept for later\n")
	return f
}

// TestSearchPage: the search tab as plain HTML, without a browser: results best first, each
// linked to its place in the transcript, with only its matching lines; hostile and empty
// queries; a seat of another room refused.
func TestSearchPage(t *testing.T) {
	f := searchRoomFixture(t)
	b := f.browser(t)
	b.signIn(f.tokens["yu"])
	resp, page := b.get("/rooms/limiter/search?q=" + url.QueryEscape(`Redis "window*`))
	if resp.StatusCode != 200 {
		t.Fatalf("search page: %d\n%s", resp.StatusCode, page)
	}
	links := regexp.MustCompile(`<a href="(/rooms/limiter\?after=\d+#m\d+)">#(\d+)</a>`).FindAllStringSubmatch(page, -1)
	if len(links) != 2 || links[0][2] != "1" || links[1][2] != "3" || links[0][1] != "/rooms/limiter?after=0#m1" {
		t.Fatalf("result links %q, want #1 (both words) then #3", links)
	}
	if !strings.Contains(page, "<code>opt/A redis sliding window</code>") || !strings.Contains(page, "<code>redis cache warmed</code>") ||
		strings.Contains(page, "kept for later") || strings.Contains(page, "nothing to see") {
		t.Errorf("the results quote other lines than the matching ones:\n%s", page)
	}
	if !strings.Contains(page, `value="Redis &#34;window*"`) {
		t.Errorf("the search box does not keep the query")
	}
	_, page = b.get("/rooms/limiter/search?q=" + url.QueryEscape(`"*:(`))
	if !strings.Contains(page, `id="no-results"`) {
		t.Errorf("a query of signs only:\n%s", page)
	}
	_, page = b.get("/rooms/limiter/search")
	if !strings.Contains(page, "Type words in the search box") {
		t.Errorf("the empty search tab:\n%s", page)
	}
	resp, page = b.get("/rooms/limiter/search?q=" + strings.Repeat("x", 600))
	if resp.StatusCode != 400 || !strings.Contains(page, `role="alert"`) || !strings.Contains(page, "over the 512") {
		t.Errorf("an oversized query: %d", resp.StatusCode)
	}
	other := f.browser(t)
	other.signIn(f.tokens["cy"])
	if resp, _ := other.get("/rooms/limiter/search?q=redis"); resp.StatusCode != 403 {
		t.Errorf("a seat of another room searched: %d", resp.StatusCode)
	}
}

// TestBrowserPartsAndSearch: in Chromium, post by parts (the header and n= written by the
// server), see the refusal of a fact that is a header with the form kept, then search from
// the tab bar and follow a result to its message.
func TestBrowserPartsAndSearch(t *testing.T) {
	ctx := newBrowser(t)
	f := searchRoomFixture(t)
	step, eval := tab{t, ctx}.step, tab{t, ctx}.eval
	step("viewport", chromedp.EmulateViewport(1400, 900))
	tab{t, ctx}.signIn(f.url+"/rooms/limiter", f.tokens["yu"], "#m3")

	step("post by parts",
		chromedp.Click("#parts summary"),
		chromedp.WaitVisible("#p-topic"),
		chromedp.SetValue("#p-intent", "decide"),
		chromedp.SetValue("#p-topic", "limiter"),
		chromedp.SetValue("#p-to", "lead, builder"),
		chromedp.SetValue("#p-re", "1"),
		chromedp.SetValue("#p-facts", "rec redis window of 60s\n\nmust-not skip the tests"),
		chromedp.Submit("#p-facts"),
		chromedp.WaitVisible("#m4"),
	)
	if text := eval(`document.getElementById("m4").textContent`); !strings.Contains(text, "decide limiter to lead, builder re #1") ||
		!strings.Contains(text, "rec redis window of 60s") {
		t.Errorf("#4 in the transcript:\n%s", text)
	}
	// What is stored is the composed text, n= counted, the blank line left out.
	if m, err := f.raw.Message(t.Context(), "limiter", 4); err != nil || m.Body != "v1 decide limiter to lead,builder re 1 n=2\nrec redis window of 60s\nmust-not skip the tests\n" {
		t.Errorf("#4 as stored: %+v %v", m, err)
	}

	step("refused post by parts",
		chromedp.Click("#parts summary"),
		chromedp.WaitVisible("#p-topic"),
		chromedp.SetValue("#p-topic", "limiter"),
		chromedp.SetValue("#p-to", "lead"),
		chromedp.SetValue("#p-facts", "v1 note limiter to all n=1"),
		chromedp.Submit("#p-facts"),
		chromedp.WaitVisible("#post-h ~ .error"),
	)
	if msg := eval(`document.querySelector("#post-h ~ .error").textContent`); !strings.Contains(msg, "itself a header") {
		t.Errorf("the refusal says: %s", msg)
	}
	if open := eval(`String(document.getElementById("parts").open) + "|" + document.getElementById("p-facts").value + "|" + document.getElementById("p-to").value`); open != "true|v1 note limiter to all n=1|lead" {
		t.Errorf("the form by parts after a refusal: %s", open)
	}

	step("search",
		chromedp.SetValue("#search-q", "redis window"),
		chromedp.Submit("#search-q"),
		chromedp.WaitVisible("#results"),
	)
	if got := eval(`Array.from(document.querySelectorAll("#results .result-head a")).map(a => a.textContent).join(",")`); got != "#4,#1,#3" && got != "#1,#4,#3" {
		t.Errorf("results %s: the two messages holding both words, then #3", got)
	}
	step("follow a result",
		chromedp.Click(`#results a[href$="#m3"]`),
		chromedp.WaitVisible("#m3"),
	)
	if loc, _ := chromedp.Run(ctx, chromedp.Location()); !strings.HasSuffix(loc, "/rooms/limiter?after=2#m3") {
		t.Errorf("the result led to %s", loc)
	}

	step("wide", chromedp.Navigate(f.url+"/rooms/limiter/search?q=redis+window"), chromedp.WaitVisible("#results"))
	if shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
		artifact(t, "search-1400.png", shot)
	}
	// The search tab at 400 px wide does not scroll sideways.
	step("narrow", chromedp.EmulateViewport(400, 900), chromedp.Navigate(f.url+"/rooms/limiter/search?q=redis"), chromedp.WaitVisible("#results"))
	if over := eval(`String(document.documentElement.scrollWidth - window.innerWidth)`); over != "0" {
		t.Errorf("the search tab at 400 px scrolls sideways by %s px", over)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err == nil {
		artifact(t, "search-400.png", shot)
	}
}
