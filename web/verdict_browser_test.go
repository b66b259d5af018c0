package web_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/web"
)

// verdictRoom is a room whose builder's report holds one evidence note of each verdict: a
// commit that is in the test's git repository (verified), one that is not (unverified), and a
// run record with failures (failed), plus a done with no evidence at all (unproven).
func verdictRoom(t *testing.T) *fixture {
	t.Helper()
	repo := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git: the verified commit needs a repository")
	}
	git("init", "-q", "-b", "main")
	git("commit", "-q", "--allow-empty", "-m", "limiter")
	sha := git("rev-parse", "--short=7", "HEAD")

	f := newFixtureRepo(t, web.Options{}, repo)
	seedRoom(t, f)
	_, tok, err := f.svc.AddSeat(t.Context(), f.admin, "limiter", "ci", parley.RoleRunner)
	if err != nil {
		t.Fatal(err)
	}
	ci, err := f.svc.Authenticate(t.Context(), tok)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.PostRun(t.Context(), ci, "limiter", "application/json",
		[]byte(`{"id":"ci-7","commit":"`+sha+`","passed":10,"failed":2}`), ""); err != nil {
		t.Fatal(err)
	}
	f.post(t, "builder", fmt.Sprintf(`v1 report limiter to lead n=7
done#1 sliding window merged
ev#1 commit %s on main
done#2 429 path wired into the handler
ev#2 commit 0badc0de
done#3 limiter tests green
ev#3 run ci-7
done#4 docs updated
`, sha))
	return f
}

// TestBrowserVerdictsAndWidths signs in, then checks that each evidence verdict wears its own
// class, symbol and colour on the transcript and on the State tab, and screenshots the
// transcript, State and Stats at 1400 and 400 px wide; at 400 px no page scrolls sideways and
// the header stacks cleanly (the brand and the site link on one line, the seat below).
func TestBrowserVerdictsAndWidths(t *testing.T) {
	ctx := newBrowser(t)
	f := verdictRoom(t)
	step, eval := tab{t, ctx}.step, tab{t, ctx}.eval
	step("viewport", chromedp.EmulateViewport(1400, 900))
	tab{t, ctx}.signIn(f.url+"/rooms/limiter", f.tokens["yu"], "#m5")

	// Each note of the report: its verdict class, its badge (symbol and word) and the badge's
	// background, which must differ between the three verdicts.
	notes := eval(`Array.from(document.querySelectorAll("#m5 .notes li")).map(li =>
		li.className + "|" + li.querySelector(".mod").textContent + "|" +
		getComputedStyle(li.querySelector(".mod")).backgroundColor).join("\n")`)
	t.Logf("notes of #5:\n%s", notes)
	lines := strings.Split(notes, "\n")
	want := []struct{ class, badge string }{
		{"verdict-verified", "✓ verified"},
		{"verdict-unverified", "? unverified"},
		{"verdict-failed", "✗ failed"},
		{"verdict-unverified", "? unproven"},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d notes on #5, want %d:\n%s", len(lines), len(want), notes)
	}
	bg := map[string]string{}
	for i, w := range want {
		p := strings.Split(lines[i], "|")
		if !strings.Contains(" "+p[0]+" ", " "+w.class+" ") || p[1] != w.badge {
			t.Errorf("note %d: class %q badge %q, want %s and %q", i+1, p[0], p[1], w.class, w.badge)
		}
		if prev, ok := bg[w.class]; ok && prev != p[2] {
			t.Errorf("two %s notes in different colours: %s, %s", w.class, prev, p[2])
		}
		bg[w.class] = p[2]
	}
	if bg["verdict-verified"] == bg["verdict-unverified"] || bg["verdict-verified"] == bg["verdict-failed"] ||
		bg["verdict-unverified"] == bg["verdict-failed"] {
		t.Errorf("verdicts share a colour: %v", bg)
	}
	if n := eval(`String(document.querySelectorAll(".notes li:not([class*=verdict-]) .mod").length)`); n != "0" {
		t.Errorf("%s evidence notes without a verdict class", n)
	}

	// A refused post in the browser: back on the room page (not on …/post, so a reload does
	// not post again), the refusal shown, the draft kept in the textarea.
	step("refused post",
		chromedp.SetValue("#body", "v1 answer limiter to lead re 1 n=3\noutcome accepted\n"),
		chromedp.Submit("#body"),
		chromedp.WaitVisible("#post-h ~ .error"),
	)
	if loc, _ := chromedp.Run(ctx, chromedp.Location()); !strings.HasSuffix(strings.SplitN(loc, "#", 2)[0], "/rooms/limiter") {
		t.Errorf("after a refused post the browser is at %q", loc)
	}
	if draft := eval(`document.getElementById("body").value`); !strings.Contains(draft, "outcome accepted") {
		t.Errorf("the draft was not kept: %q", draft)
	}

	// The State tab: done items carry the same classes.
	step("state", chromedp.Navigate(f.url+"/rooms/limiter/state"), chromedp.WaitVisible("#st-limiter"))
	state := eval(`Array.from(document.querySelectorAll(".state .verdict")).map(v =>
		v.className + "|" + v.querySelector(".vb").textContent).join("\n")`)
	t.Logf("verdicts on the State tab:\n%s", state)
	for _, w := range []string{"verdict verdict-verified|✓ verified", "verdict verdict-unverified|? unverified",
		"verdict verdict-failed|✗ failed", "verdict verdict-unverified|? unproven"} {
		if !strings.Contains(state, w) {
			t.Errorf("the State tab has no %q", w)
		}
	}
	if strings.Contains(state, "verdict-verified|? ") || strings.Contains(state, "verdict-failed|?") {
		t.Errorf("a verdict badge contradicts its class:\n%s", state)
	}

	// Screenshots at both widths; at 400 px nothing scrolls sideways.
	for _, width := range []int64{1400, 400} {
		for _, p := range []struct{ path, wait, name string }{
			{"/rooms/limiter", "#m5", "transcript"},
			{"/rooms/limiter/state", "#st-limiter", "state"},
			{"/rooms/limiter/stats", "#c-posted", "stats"},
		} {
			step(p.name, chromedp.EmulateViewport(width, 900), chromedp.Navigate(f.url+p.path), chromedp.WaitVisible(p.wait))
			if width == 400 {
				if over := eval(`String(document.documentElement.scrollWidth - window.innerWidth)`); over != "0" {
					t.Errorf("%s at 400 px scrolls sideways by %s px", p.name, over)
				}
				// The header: brand and site nav on one line, the signed-in seat below them,
				// nothing overlapping.
				hdr := eval(`(() => {
					const r = s => document.querySelector(s).getBoundingClientRect();
					const b = r(".top .brand"), n = r(".top nav"), w = r(".top .who");
					return [Math.abs(b.top - n.top) < 12, w.top >= Math.max(b.bottom, n.bottom) - 1, w.right <= window.innerWidth].join(",");
				})()`)
				if hdr != "true,true,true" {
					t.Errorf("%s at 400 px: header layout %s (want brand and nav on one line, the seat below, inside the page)", p.name, hdr)
				}
			}
			png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatal(err)
			}
			artifact(t, fmt.Sprintf("parley-%s-%d.png", p.name, width), png)
		}
	}
}
