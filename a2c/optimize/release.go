package optimize

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/parleyhq/parley/a2c"
	"github.com/parleyhq/parley/figure"
	"github.com/parleyhq/parley/trace"
)

// Results is everything the report states; results.json holds it. No clock or machine
// value is in it (those go to the manifest), so the same corpus, seed and version give
// the same bytes.
type Results struct {
	ParleyVersion     string                        `json:"parley_version"`
	Adapter           string                        `json:"adapter"`
	Encoding          string                        `json:"encoding"`
	Seed              int64                         `json:"seed"`
	Fingerprint       string                        `json:"corpus_fingerprint"`
	Thresholds        Thresholds                    `json:"thresholds"`
	TestShare         float64                       `json:"test_share"`
	Winner            []string                      `json:"winner"`
	Sessions          int                           `json:"test_sessions"`
	Handoffs          int                           `json:"test_handoffs"`
	RawTokens         int                           `json:"raw_tokens"`
	PayloadTokens     int                           `json:"payload_tokens"`
	InstructionTokens int                           `json:"instruction_tokens"`
	DictionaryTokens  int                           `json:"dictionary_tokens"`
	FullCostTokens    int                           `json:"full_cost_tokens"`
	Saving            float64                       `json:"saving"`
	PayloadOnlySaving float64                       `json:"payload_only_saving"`
	MedianBreakEven   *float64                      `json:"median_break_even"`
	NeverBreakEven    int                           `json:"never_break_even"`
	Lossless          bool                          `json:"lossless"`
	Baselines         map[string]a2c.BaselineResult `json:"baselines"`
	PerSession        []SessionFigures              `json:"per_session"`
	Selection         *Selection                    `json:"selection"`
	Retest            []Retest                      `json:"retest"`
	Stability         Stability                     `json:"stability"`
	Verdict           string                        `json:"verdict"`
}

// Thresholds are the verdict's rules.
type Thresholds struct {
	MinSaving          float64 `json:"min_saving"`
	MaxMedianBreakEven float64 `json:"max_median_break_even"`
}

// SessionFigures is one test session's accounting.
type SessionFigures struct {
	ID                string `json:"id"`
	Handoffs          int    `json:"handoffs"`
	RawTokens         int    `json:"raw_tokens"`
	PayloadTokens     int    `json:"payload_tokens"`
	InstructionTokens int    `json:"instruction_tokens"`
	DictionaryShare   int    `json:"dictionary_share"`
	BreakEven         int    `json:"break_even"` // 0 = never
}

// Retest is the selection re-run on another seed and its winner's test figures.
type Retest struct {
	Seed           int64    `json:"seed"`
	Winner         []string `json:"winner"`
	RawTokens      int      `json:"raw_tokens"`
	FullCostTokens int      `json:"full_cost_tokens"`
	Saving         float64  `json:"saving"`
}

// Stability summarises the test saving across the main seed and the re-test seeds.
type Stability struct {
	Savings []float64 `json:"savings"` // main seed first, then Retest in order
	Min     float64   `json:"min"`
	Max     float64   `json:"max"`
	Spread  float64   `json:"spread"` // Max − Min
}

// Verdict applies the thresholds.
func Verdict(saving float64, median *float64) string {
	if saving >= MinSaving && median != nil && *median <= MaxBreakEven {
		return "practical"
	}
	return "research-only"
}

// Run performs the search, the test measurement and the re-tests.
func Run(ctx context.Context, cfg *Config, sessions []trace.Session) (*Results, *Selection, error) {
	in := a2c.Inputs(sessions)
	a2c.RawCounts(in, cfg.Counter)
	sel, test, err := Select(ctx, cfg, in, cfg.Seed)
	if err != nil {
		return nil, nil, err
	}
	if cfg.Progress != nil {
		cfg.Progress("measuring the winner on the test split", 0, 1)
	}
	res, err := a2c.Measure(ctx, test, sel.options, cfg.Counter, cfg.Encoding, cfg.Baselines, nil)
	if err != nil {
		return nil, nil, err
	}
	r := &Results{
		ParleyVersion: cfg.Version, Adapter: cfg.Adapter, Encoding: cfg.Encoding, Seed: cfg.Seed,
		Fingerprint: Fingerprint(sessions),
		Thresholds:  Thresholds{MinSaving: MinSaving, MaxMedianBreakEven: MaxBreakEven}, TestShare: TestShare,
		Winner: sel.Enabled, Sessions: res.Sessions, Handoffs: res.Handoffs,
		RawTokens: res.RawTokens, PayloadTokens: res.PayloadTokens, InstructionTokens: res.InstructionTokens,
		DictionaryTokens: res.DictionaryTokens, FullCostTokens: res.FullCostTokens, Saving: res.Saving,
		PayloadOnlySaving: saving(res.PayloadTokens, res.RawTokens),
		MedianBreakEven:   res.MedianBreakEven, NeverBreakEven: res.NeverBreakEven, Lossless: res.Lossless,
		Baselines: res.Baselines, Selection: sel, Retest: []Retest{},
	}
	for _, s := range res.PerSession {
		r.PerSession = append(r.PerSession, SessionFigures{ID: s.ID, Handoffs: s.Handoffs, RawTokens: s.RawTokens,
			PayloadTokens: s.PayloadTokens, InstructionTokens: s.InstructionTokens, DictionaryShare: s.DictionaryTokens, BreakEven: s.BreakEven})
	}
	r.Stability.Savings = []float64{r.Saving}
	for _, seed := range cfg.Retest {
		s2, test2, err := Select(ctx, cfg, in, seed)
		if err != nil {
			return nil, nil, err
		}
		res2, err := a2c.Measure(ctx, test2, s2.options, cfg.Counter, cfg.Encoding, nil, nil)
		if err != nil {
			return nil, nil, err
		}
		r.Retest = append(r.Retest, Retest{Seed: seed, Winner: s2.Enabled, RawTokens: res2.RawTokens, FullCostTokens: res2.FullCostTokens, Saving: res2.Saving})
		r.Stability.Savings = append(r.Stability.Savings, res2.Saving)
	}
	r.Stability.Min, r.Stability.Max, r.Stability.Spread = spread(r.Stability.Savings)
	r.Verdict = Verdict(r.Saving, r.MedianBreakEven)
	return r, sel, nil
}

func saving(full, raw int) float64 {
	if raw == 0 {
		return 0
	}
	return 1 - float64(full)/float64(raw)
}

func spread(xs []float64) (lo, hi, d float64) {
	if len(xs) == 0 {
		return 0, 0, 0
	}
	lo, hi = xs[0], xs[0]
	for _, x := range xs[1:] {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo, hi, hi - lo
}

func medianBreakEven(ps []SessionFigures) *float64 {
	var xs []int
	for _, p := range ps {
		if p.BreakEven == 0 {
			xs = append(xs, math.MaxInt)
		} else {
			xs = append(xs, p.BreakEven)
		}
	}
	sort.Ints(xs)
	n := len(xs)
	if n == 0 || xs[n/2] == math.MaxInt {
		return nil
	}
	m := float64(xs[n/2])
	if n%2 == 0 {
		m = float64(xs[n/2-1]+xs[n/2]) / 2
	}
	return &m
}

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

func breakEvenText(m *float64) string {
	if m == nil {
		return "never (the median session does not break even)"
	}
	return fmt.Sprintf("%g handoffs", *m)
}

// Facts are the report's headline figures, each a line of report.md; check recomputes
// them from results.json and requires every one of them in the report.
func Facts(r *Results) []string {
	f := []string{
		fmt.Sprintf("- full cost on the test split: %d tokens (saving %s against canonical JSON)", r.FullCostTokens, pct(r.Saving)),
		fmt.Sprintf("- raw canonical JSON: %d tokens", r.RawTokens),
		fmt.Sprintf("- payload: %d tokens (payload-only saving %s, not the claim)", r.PayloadTokens, pct(r.PayloadOnlySaving)),
		fmt.Sprintf("- decode instructions: %d tokens", r.InstructionTokens),
		fmt.Sprintf("- dictionary: %d tokens", r.DictionaryTokens),
		fmt.Sprintf("- median break-even: %s", breakEvenText(r.MedianBreakEven)),
		fmt.Sprintf("- sessions never breaking even: %d of %d", r.NeverBreakEven, r.Sessions),
		fmt.Sprintf("- round trip: %s", map[bool]string{true: "byte-exact on every record", false: "NOT byte-exact"}[r.Lossless]),
	}
	for _, k := range sortedKeys(r.Baselines) {
		b := r.Baselines[k]
		if b.Error != "" {
			f = append(f, fmt.Sprintf("- against %s: skipped (%s)", k, b.Error))
			continue
		}
		f = append(f, fmt.Sprintf("- against %s: %d tokens (saving %s)", k, b.Tokens, pct(b.Saving)))
	}
	for _, rt := range r.Retest {
		f = append(f, fmt.Sprintf("- re-test seed %d: saving %s (%d of %d tokens)", rt.Seed, pct(rt.Saving), rt.FullCostTokens, rt.RawTokens))
	}
	f = append(f, fmt.Sprintf("- stability: saving from %s to %s, spread %.1f points", pct(r.Stability.Min), pct(r.Stability.Max), 100*r.Stability.Spread))
	f = append(f, fmt.Sprintf("- verdict: %s", r.Verdict))
	return f
}

// Markdown renders report.md.
func Markdown(r *Results) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# a2c optimize: %s, seed %d, %s\n\n", r.Adapter, r.Seed, r.Encoding)
	fmt.Fprintf(&b, "**Verdict: %s.** Full cost on the held-out test split (%d sessions, %d handoffs): **%d tokens against %d raw, a saving of %s.** ",
		r.Verdict, r.Sessions, r.Handoffs, r.FullCostTokens, r.RawTokens, pct(r.Saving))
	fmt.Fprintf(&b, "Practical means a saving of at least %s and a median break-even within %g handoffs.\n\n", pct(r.Thresholds.MinSaving), r.Thresholds.MaxMedianBreakEven)
	fmt.Fprintf(&b, "Full cost = payload + decode instructions (per session, describing only what it uses) + dictionary (in full, once). Raw = the canonical JSON of every record. The test split was never seen by the search: %s of the trajectories, drawn from the seed.\n\n", pct(r.TestShare))
	b.WriteString("## Figures\n\n")
	for _, f := range Facts(r) {
		b.WriteString(f + "\n")
	}
	fmt.Fprintf(&b, "\nWinning configuration: %s. Corpus fingerprint: `%s`. parley %s.\n\n", configName(r.Winner), r.Fingerprint, r.ParleyVersion)
	b.WriteString("## Stability across seeds\n\n")
	t := figure.Table{Header: []string{"seed", "winner", "raw", "full cost", "saving"}, Align: []figure.Align{figure.Right, figure.Left, figure.Right, figure.Right, figure.Right}}
	t.Rows = append(t.Rows, []string{fmt.Sprint(r.Seed), configName(r.Winner), fmt.Sprint(r.RawTokens), fmt.Sprint(r.FullCostTokens), pct(r.Saving)})
	for _, rt := range r.Retest {
		t.Rows = append(t.Rows, []string{fmt.Sprint(rt.Seed), configName(rt.Winner), fmt.Sprint(rt.RawTokens), fmt.Sprint(rt.FullCostTokens), pct(rt.Saving)})
	}
	b.WriteString(t.Markdown())
	b.WriteString("\n## Break-even per test session\n\n")
	t = figure.Table{Header: []string{"session", "handoffs", "raw", "payload", "instructions", "dictionary share", "break-even"},
		Align: []figure.Align{figure.Left, figure.Right, figure.Right, figure.Right, figure.Right, figure.Right, figure.Right}}
	for _, s := range r.PerSession {
		be := "never"
		if s.BreakEven > 0 {
			be = fmt.Sprint(s.BreakEven)
		}
		t.Rows = append(t.Rows, []string{s.ID, fmt.Sprint(s.Handoffs), fmt.Sprint(s.RawTokens), fmt.Sprint(s.PayloadTokens), fmt.Sprint(s.InstructionTokens), fmt.Sprint(s.DictionaryShare), be})
	}
	b.WriteString(t.Markdown())
	b.WriteString("\n## Every configuration tried (training split)\n\n")
	fmt.Fprintf(&b, "%d cycles; each probe adds one improvement to the configuration of its cycle, and is scored on held-back training sessions: two inner folds, each measured with the configuration fitted on the other. A probe that is not byte-exact on every record cannot win.\n\n", r.Selection.Cycles)
	t = figure.Table{Header: []string{"cycle", "configuration", "raw", "full cost", "saving", "lossless", "outcome"},
		Align: []figure.Align{figure.Right, figure.Left, figure.Right, figure.Right, figure.Right, figure.Center, figure.Left}}
	for _, p := range r.Selection.Probes {
		t.Rows = append(t.Rows, []string{fmt.Sprint(p.Cycle), p.Config, fmt.Sprint(p.RawTokens), fmt.Sprint(p.FullCostTokens), pct(p.Saving), map[bool]string{true: "yes", false: "no"}[p.Lossless], p.Outcome})
	}
	b.WriteString(t.Markdown())
	b.WriteString("\nCharts: `full-cost.svg` (full cost of every configuration tried), `break-even.svg` (break-even per test session).\n")
	return b.String()
}

// Manifest is what a re-run needs to reproduce the results, plus the clock and machine
// values that must stay out of the results.
type Manifest struct {
	Seed          int64         `json:"seed"`
	Retest        []int64       `json:"retest_seeds"`
	MaxCycles     int           `json:"max_cycles"`
	Fingerprint   string        `json:"corpus_fingerprint"`
	Sessions      int           `json:"sessions"`
	Adapter       string        `json:"adapter"`
	Source        string        `json:"source"`
	Encoding      string        `json:"encoding"`
	ParleyVersion string        `json:"parley_version"`
	SearchSpace   []Improvement `json:"search_space"`
	TestShare     float64       `json:"test_share"`
	Started       string        `json:"started"`
	Seconds       float64       `json:"seconds"`
	GoVersion     string        `json:"go_version"`
	Platform      string        `json:"platform"`
	CPUs          int           `json:"cpus"`
}

// Protocol is the winning configuration, as options a2c understands.
type Protocol struct {
	Format       string `json:"format"`
	Schema       bool   `json:"schema"`
	Bare         bool   `json:"bare"`
	RawNewlines  bool   `json:"raw_newlines"`
	Embedded     bool   `json:"embedded_json"`
	ValueRefs    bool   `json:"value_refs"`
	MinValueLen  int    `json:"min_value_len,omitempty"`
	Splices      bool   `json:"splices"`
	MinSplice    int    `json:"min_splice,omitempty"`
	TokenAligned bool   `json:"token_aligned"`
	Dictionary   string `json:"dictionary,omitempty"` // the dictionary text, when one won
	DictCharge   string `json:"dictionary_charge"`
}

func protocolOf(o a2c.Options) Protocol {
	p := Protocol{Format: a2c.Magic, Schema: o.Schema, Bare: o.Bare, RawNewlines: o.RawNewlines, Embedded: o.Embedded,
		ValueRefs: o.ValueRefs, Splices: o.Splices, TokenAligned: o.TokenAligned, DictCharge: "once"}
	if o.ValueRefs {
		p.MinValueLen = o.MinValueLen
	}
	if o.Splices {
		p.MinSplice = o.MinSplice
	}
	if o.Dictionary != nil {
		p.Dictionary = o.Dictionary.Text
	}
	return p
}

// Write writes the release folder.
func Write(dir string, r *Results, sel *Selection, m Manifest) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := map[string][]byte{}
	js := func(v any) []byte {
		b, _ := json.MarshalIndent(v, "", "  ")
		return append(b, '\n')
	}
	files["results.json"] = js(r)
	files["report.md"] = []byte(Markdown(r))
	files["protocol.json"] = js(protocolOf(sel.options))
	files["manifest.json"] = js(m)
	var bars []figure.Bar
	for _, p := range r.Selection.Probes {
		bars = append(bars, figure.Bar{Label: fmt.Sprintf("c%d %s", p.Cycle, orBaseline(p.Added)), Value: float64(p.FullCostTokens)})
	}
	var buf bytes.Buffer
	if err := (figure.BarChart{Title: "Full cost of every configuration tried (training split)", Unit: "tokens", Bars: bars}).WriteSVG(&buf); err != nil {
		return err
	}
	files["full-cost.svg"] = append([]byte(nil), buf.Bytes()...)
	bars = nil
	for _, s := range r.PerSession {
		if s.BreakEven > 0 {
			bars = append(bars, figure.Bar{Label: s.ID, Value: float64(s.BreakEven), Group: "breaks even at"})
		} else {
			bars = append(bars, figure.Bar{Label: s.ID, Value: float64(s.Handoffs), Group: "never (bar = handoffs)"})
		}
	}
	buf.Reset()
	if err := (figure.BarChart{Title: "Break-even handoff per test session", Unit: "handoffs", Bars: bars}).WriteSVG(&buf); err != nil {
		return err
	}
	files["break-even.svg"] = append([]byte(nil), buf.Bytes()...)
	for _, name := range sortedKeys(files) {
		if err := os.WriteFile(filepath.Join(dir, name), files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}

func orBaseline(s string) string {
	if s == "" {
		return "baseline"
	}
	return s
}

// NewManifest fills in the machine values.
func NewManifest(cfg *Config, source string, sessions []trace.Session, started time.Time, took time.Duration) Manifest {
	return Manifest{Seed: cfg.Seed, Retest: cfg.Retest, MaxCycles: max(cfg.MaxCycles, 0), Fingerprint: Fingerprint(sessions),
		Sessions: len(sessions), Adapter: cfg.Adapter, Source: source, Encoding: cfg.Encoding, ParleyVersion: cfg.Version,
		SearchSpace: SearchSpace(), TestShare: TestShare, Started: started.UTC().Format(time.RFC3339), Seconds: took.Seconds(),
		GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH, CPUs: runtime.NumCPU()}
}
