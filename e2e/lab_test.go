package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/parleyhq/parley/internal/browsertest"
)

// benchmarkFigures is what the lab and `parley a2c benchmark --json` both report.
type benchmarkFigures struct {
	Encoding          string `json:"encoding"`
	Sessions          int    `json:"sessions"`
	RawTokens         int    `json:"raw_tokens"`
	PayloadTokens     int    `json:"payload_tokens"`
	InstructionTokens int    `json:"instruction_tokens"`
	DictionaryTokens  int    `json:"dictionary_tokens"`
	FullCostTokens    int    `json:"full_cost_tokens"`
	Saving            float64
	MedianBreakEven   *float64 `json:"median_break_even"`
	Lossless          bool     `json:"lossless"`
	Baselines         map[string]struct {
		Tokens int `json:"tokens"`
	} `json:"baselines"`
}

// TestFormatLab loads /lab from the real server in headless Chromium, pastes the project's
// copies of shared traces (one per adapter), and compares every figure the page shows with
// what the real binary's `parley a2c benchmark --json` prints for the same file. Then it
// types a convention message whose error is known by hand and watches the diagnostics follow
// as it is typed and corrected. Throughout, the page may fetch only its own assets: nothing
// pasted leaves the browser.
func TestFormatLab(t *testing.T) {
	parley(t)
	s := startServer(t, "lab", nil, "--db", "sqlite:"+filepath.Join(t.TempDir(), "parley.db"))

	ctx := browsertest.New(t)

	// Every request the page makes: same origin, GET, and only the lab's own files.
	var mu sync.Mutex
	var requests []string
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requests = append(requests, e.Request.Method+" "+e.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}

	tctx, tcancel := context.WithTimeout(ctx, 4*time.Minute)
	defer tcancel()
	start := time.Now()
	if err := chromedp.Do(tctx, chromedp.Navigate(s.url+"/lab")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(tctx, chromedp.Poll[bool](`document.body.dataset.labReady === "1"`, chromedp.WithPollingTimeout(2*time.Minute))); err != nil {
		status, _ := chromedp.Run(ctx, chromedp.Text("#lab-status"))
		t.Fatalf("the lab did not load: %v (status: %q)", err, status)
	}
	loadMs, _ := chromedp.Run(tctx, chromedp.Evaluate[string](`document.body.dataset.labLoadMs`))
	timings, _ := chromedp.Run(tctx, chromedp.Evaluate[string](`document.body.dataset.labTimings`))
	t.Logf("first load: %s ms in the page (%s); %s from navigation to ready", loadMs, timings, time.Since(start).Round(time.Millisecond))

	for _, tc := range []struct{ adapter, file string }{
		{"openai", "../trace/testdata/openai/tau-airline-2.jsonl"},
		{"toolbench", "../trace/testdata/toolbench/10_ChatGPT_DFS_woFilter_w2.json"},
		{"swe-agent", "../trace/testdata/swe-agent/function_calling_simple.traj"},
	} {
		t.Run(tc.adapter, func(t *testing.T) {
			text, err := os.ReadFile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]benchmarkFigures{}
			for _, enc := range []string{"o200k_base", "cl100k_base"} {
				out, errOut, code := s.cli(t, "", "", "a2c", "benchmark", "--adapter", tc.adapter, "--source", tc.file, "--encoding", enc, "--json")
				if code != 0 {
					t.Fatalf("parley a2c benchmark: exit %d\n%s", code, errOut)
				}
				var f benchmarkFigures
				if err := json.Unmarshal([]byte(out), &f); err != nil {
					t.Fatalf("benchmark --json: %v\n%s", err, out)
				}
				want[enc] = f
			}

			// Paste (set the value and fire input, as a paste does), pick "detect", analyze.
			js, _ := json.Marshal(string(text))
			before, _ := chromedp.Run(tctx, chromedp.Evaluate[string](`document.body.dataset.labAnalyzed || ""`))
			err = chromedp.Do(tctx,
				chromedp.SetValue("#lab-adapter", "auto"),
				chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
					_, err := chromedp.Evaluate[any](fmt.Sprintf(`(() => { const t = document.getElementById("lab-trace"); t.value = %s; t.dispatchEvent(new Event("input")); })()`, js))(ctx, tg)
					return err
				}),
				chromedp.Click("#lab-analyze"),
			)
			if err == nil {
				_, err = chromedp.Run(tctx, chromedp.Poll[bool](fmt.Sprintf(`!!document.body.dataset.labAnalyzed && document.body.dataset.labAnalyzed !== %q`, before), chromedp.WithPollingTimeout(2*time.Minute)))
			}
			if err != nil {
				msg, _ := chromedp.Run(ctx, chromedp.TextContent("#lab-error"))
				t.Fatalf("analyze: %v (%s)", err, msg)
			}
			if msg, _ := chromedp.Run(ctx, chromedp.TextContent("#lab-error")); msg != "" {
				t.Fatalf("the page reports an error: %s", msg)
			}
			cells, err := chromedp.Run(tctx, chromedp.Evaluate[[]struct{ Figure, Encoding, Value, Text string }](`[...document.querySelectorAll("[data-figure]")].map(td => ({Figure: td.dataset.figure, Encoding: td.dataset.encoding, Value: td.dataset.value, Text: td.textContent}))`))
			if err != nil {
				t.Fatal(err)
			}
			summary, _ := chromedp.Run(tctx, chromedp.Text("#lab-summary"))
			roundTrip, _ := chromedp.Run(tctx, chromedp.Text("#lab-roundtrip"))
			if !strings.HasPrefix(summary, "Read as "+tc.adapter+" (detected)") {
				t.Errorf("summary %q: the %s file was not detected as such", summary, tc.adapter)
			}
			if !strings.Contains(roundTrip, "byte for byte") {
				t.Errorf("round trip shows %q", roundTrip)
			}
			got := map[string]map[string]string{}
			text2 := map[string]map[string]string{}
			for _, c := range cells {
				if got[c.Encoding] == nil {
					got[c.Encoding], text2[c.Encoding] = map[string]string{}, map[string]string{}
				}
				got[c.Encoding][c.Figure], text2[c.Encoding][c.Figure] = c.Value, c.Text
			}
			for enc, w := range want {
				g := got[enc]
				check := func(key string, want any) {
					if g[key] != fmt.Sprint(want) {
						t.Errorf("%s %s: page %q, parley a2c benchmark %v", enc, key, g[key], want)
					}
				}
				check("raw_tokens", w.RawTokens)
				check("payload_tokens", w.PayloadTokens)
				check("instruction_tokens", w.InstructionTokens)
				check("dictionary_tokens", w.DictionaryTokens)
				check("full_cost_tokens", w.FullCostTokens)
				for _, b := range []string{"minified_json", "pretty_json", "toon"} {
					check("baseline:"+b, w.Baselines[b].Tokens)
				}
				if w.MedianBreakEven == nil {
					check("median_break_even", "never")
				} else {
					check("median_break_even", *w.MedianBreakEven)
				}
				check("lossless", w.Lossless)
				if pct := fmt.Sprintf("saving %.1f%%", 100*w.Saving); !strings.Contains(text2[enc]["full_cost_tokens"], pct) || math.IsNaN(w.Saving) {
					t.Errorf("%s full cost shows %q, want it to say %s", enc, text2[enc]["full_cost_tokens"], pct)
				}
			}
			t.Logf("%s: cl100k full cost %s, o200k %s", tc.adapter, text2["cl100k_base"]["full_cost_tokens"], text2["o200k_base"]["full_cost_tokens"])
			if png, err := chromedp.Run(tctx, chromedp.FullScreenshot(100)); err == nil {
				dir := os.Getenv("PARLEY_TEST_ARTIFACTS")
				if dir == "" {
					dir = t.TempDir()
				}
				p := filepath.Join(dir, "lab-"+tc.adapter+".png")
				if os.MkdirAll(dir, 0o755) == nil && os.WriteFile(p, png, 0o644) == nil {
					t.Logf("artifact: %s", p)
				}
			}
		})
	}

	// Lint as you type: n=2 over one fact line is an n-mismatch error at 1:27 (the "n=2"
	// after the 26 characters "v1 report limiter to lead "); typed key by key.
	type diag struct{ Code, Text string }
	var diags []diag
	waitLinted := func(want string) {
		t.Helper()
		js, _ := json.Marshal(want)
		_, err := chromedp.Run(tctx, chromedp.Poll[bool](fmt.Sprintf(`document.getElementById("lab-diagnostics").dataset.linted === %s`, js), chromedp.WithPollingTimeout(30*time.Second)))
		if err == nil {
			diags, err = chromedp.Run(tctx, chromedp.Evaluate[[]diag](`[...document.querySelectorAll("#lab-diagnostics li")].map(li => ({Code: li.dataset.code || "", Text: li.textContent}))`))
		}
		if err != nil {
			got, _ := chromedp.Run(tctx, chromedp.Value("#lab-message"))
			t.Fatalf("lint of %q: %v (the field holds %q)", want, err, got)
		}
	}
	bad := "v1 report limiter to lead n=2\ndone#1 limiter built"
	if err := chromedp.Do(tctx, chromedp.SendKeys("#lab-message", bad)); err != nil {
		t.Fatal(err)
	}
	waitLinted(bad)
	found := false
	for _, d := range diags {
		found = found || d.Code == "n-mismatch" && strings.HasPrefix(d.Text, "1:27 error")
	}
	if !found {
		t.Errorf("typed %q: want an n-mismatch error at 1:27, got %+v", bad, diags)
	}
	// Correct n=2 to n=1 by typing over the "2" (offset 28): the error goes away.
	fixed := strings.Replace(bad, "n=2", "n=1", 1)
	if _, err := chromedp.Run(tctx, chromedp.Evaluate[any](`(() => { const m = document.getElementById("lab-message"); m.focus(); m.setSelectionRange(28, 29); })()`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tctx, chromedp.SendKeys("#lab-message", "1")); err != nil {
		t.Fatal(err)
	}
	waitLinted(fixed)
	for _, d := range diags {
		if d.Code == "n-mismatch" || strings.Contains(d.Text, " error") && strings.HasPrefix(d.Text, "1:") {
			t.Errorf("after the fix %q: still %+v", fixed, d)
		}
	}

	// A second visit, its files cached (max-age=300): what is left is compiling and loading.
	if err := chromedp.Do(tctx, chromedp.Navigate(s.url+"/lab")); err == nil {
		if _, err := chromedp.Run(tctx, chromedp.Poll[bool](`document.body.dataset.labReady === "1"`, chromedp.WithPollingTimeout(2*time.Minute))); err == nil {
			ms, _ := chromedp.Run(tctx, chromedp.Evaluate[string](`document.body.dataset.labLoadMs`))
			timings, _ := chromedp.Run(tctx, chromedp.Evaluate[string](`document.body.dataset.labTimings`))
			t.Logf("second load (cached): %s ms (%s)", ms, timings)
		}
	}

	mu.Lock()
	defer mu.Unlock()
	base, _ := url.Parse(s.url)
	allowed := map[string]bool{"/lab": true, "/lab/lab.js": true, "/lab/lab.css": true, "/lab/wasm_exec.js": true,
		"/lab/lab.wasm": true, "/lab/vocab/o200k_base": true, "/lab/vocab/cl100k_base": true, "/static/style.css": true, "/static/icon.svg": true}
	for _, r := range requests {
		method, raw, _ := strings.Cut(r, " ")
		u, err := url.Parse(raw)
		if err != nil || method != "GET" || u.Host != base.Host || !allowed[u.Path] || u.RawQuery != "" {
			t.Errorf("the page made a request it must not: %s", r)
		}
	}
	if len(requests) == 0 {
		t.Error("no request seen: the network listener is not working")
	}
}
