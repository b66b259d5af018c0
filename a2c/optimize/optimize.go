// Package optimize runs a2c's bounded configuration search and writes a reproducible
// release folder.
//
// The search splits a corpus by whole trajectory into a training and a test split from a
// seed, starts from the baseline (canonical JSON lines: every mechanism off), and in each
// cycle probes every improvement not yet enabled, with each of its parameter settings, on
// the training split: the training sessions are dealt into two inner folds, and each
// probe is scored on each fold with its configuration fitted (a dictionary learned, for
// one) on the other, so no probe is scored on sessions it was fitted to. The probe with
// the lowest held-back full cost wins the cycle if it is lossless
// on every record and cheaper than the current configuration; a configuration that is
// not byte-exact cannot win. The search stops after two cycles without improvement or at
// the cycle limit. The winner is then measured once on the test split, and the whole
// selection is re-run on other seeds to show how much the figure depends on the split.
//
// It is its own package, not part of a2c, because it is a harness around the codec: it
// writes files, draws charts (package report) and judges results, none of which a
// program that only encodes handoffs should link.
package optimize

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/parleyhq/parley/a2c"
	"github.com/parleyhq/parley/trace"
)

// Thresholds of the verdict: practical when the test saving is at least MinSaving and the
// median session breaks even within MaxBreakEven handoffs; otherwise research-only.
const (
	MinSaving    = 0.15
	MaxBreakEven = 10.0
	TestShare    = 0.3
)

// Config is one optimize run.
type Config struct {
	Adapter   string
	Encoding  string
	Seed      int64
	MaxCycles int     // default 10
	Retest    []int64 // seeds the selection is re-run on
	Version   string  // parley's version, recorded in the results
	Counter   a2c.Counter
	Baselines []a2c.Baseline // renderings the winner is compared with on the test split
	// Progress, when set, receives a short line about each step.
	Progress func(step string, done, total int)
}

// Improvement is one mechanism the search may enable, with one parameter setting.
type Improvement struct {
	Name  string `json:"name"`
	Param string `json:"param,omitempty"`
	apply func(o *a2c.Options, train []a2c.Input)
}

func (im Improvement) label() string {
	if im.Param == "" {
		return im.Name
	}
	return im.Name + "(" + im.Param + ")"
}

// SearchSpace returns every improvement and setting the search probes, in probe order.
func SearchSpace() []Improvement {
	var s []Improvement
	add := func(name, param string, f func(o *a2c.Options, train []a2c.Input)) {
		s = append(s, Improvement{Name: name, Param: param, apply: f})
	}
	// Raw newlines only exist in the schema's text fields, so they are a setting of the
	// schema rather than an improvement of their own that could never win alone.
	add("schema", "newlines=raw", func(o *a2c.Options, _ []a2c.Input) { o.Schema, o.RawNewlines = true, true })
	add("schema", "newlines=escaped", func(o *a2c.Options, _ []a2c.Input) { o.Schema = true })
	add("bare", "", func(o *a2c.Options, _ []a2c.Input) { o.Bare = true })
	add("embedded_json", "", func(o *a2c.Options, _ []a2c.Input) { o.Embedded = true })
	for _, n := range []int{4, 6, 10} {
		add("value_refs", fmt.Sprintf("min_len=%d", n), func(o *a2c.Options, _ []a2c.Input) { o.ValueRefs, o.MinValueLen = true, n })
	}
	for _, n := range []int{8, 12, 16, 24, 40} {
		add("splices", fmt.Sprintf("min_bytes=%d", n), func(o *a2c.Options, _ []a2c.Input) { o.Splices, o.MinSplice = true, n })
	}
	add("token_aligned", "", func(o *a2c.Options, _ []a2c.Input) { o.TokenAligned = true })
	add("adapt", "", func(o *a2c.Options, _ []a2c.Input) { o.Adapt = true })
	// Prose lines are written only by Adapt (which weighs them per session), so alone
	// they change nothing; raw values need the schema.
	add("prose_lines", "", func(o *a2c.Options, _ []a2c.Input) { o.Prose = true })
	add("raw_values", "", func(o *a2c.Options, _ []a2c.Input) { o.RawValues = true })
	for _, n := range []int{2048, a2c.DefaultMaxBytes} {
		add("dictionary", fmt.Sprintf("max_bytes=%d", n), func(o *a2c.Options, train []a2c.Input) {
			recs := make([][]trace.Value, len(train))
			for i := range train {
				recs[i] = train[i].Records
			}
			o.Dictionary = a2c.Train(recs, a2c.TrainOptions{MaxBytes: n, Counter: o.Counter})
		})
	}
	return s
}

// Probe is one configuration measured on the training split.
type Probe struct {
	Cycle          int     `json:"cycle"`
	Config         string  `json:"config"` // the enabled improvements, in order
	Added          string  `json:"added"`  // the improvement this probe adds ("" for the baseline)
	RawTokens      int     `json:"raw_tokens"`
	FullCostTokens int     `json:"full_cost_tokens"`
	Saving         float64 `json:"saving"`
	Lossless       bool    `json:"lossless"`
	Outcome        string  `json:"outcome"` // won, or why it lost
}

// Selection is the outcome of one search on one split.
type Selection struct {
	Seed          int64    `json:"seed"`
	TrainSessions []string `json:"train_sessions"`
	TestSessions  []string `json:"test_sessions"`
	Enabled       []string `json:"enabled"`
	Probes        []Probe  `json:"probes"`
	Cycles        int      `json:"cycles"`
	options       a2c.Options
}

// Split divides sessions (by whole trajectory) into training and test sets from a seed.
// The test set takes TestShare of the sessions, at least one, and the training set at
// least one when there are two or more.
func Split(in []a2c.Input, seed int64) (train, test []a2c.Input) {
	idx := make([]int, len(in))
	for i := range idx {
		idx[i] = i
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0xa2c))
	rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	n := int(float64(len(in))*TestShare + 0.5)
	n = max(n, 1)
	if len(in) > 1 {
		n = min(n, len(in)-1)
	}
	isTest := map[int]bool{}
	for _, i := range idx[:n] {
		isTest[i] = true
	}
	for i := range in {
		if isTest[i] {
			test = append(test, in[i])
		} else {
			train = append(train, in[i])
		}
	}
	return train, test
}

// Select runs the bounded search on one split.
func Select(ctx context.Context, cfg *Config, in []a2c.Input, seed int64) (*Selection, []a2c.Input, error) {
	train, test := Split(in, seed)
	sel := &Selection{Seed: seed}
	for _, s := range train {
		sel.TrainSessions = append(sel.TrainSessions, s.ID)
	}
	for _, s := range test {
		sel.TestSessions = append(sel.TestSessions, s.ID)
	}
	maxCycles := cfg.MaxCycles
	if maxCycles <= 0 {
		maxCycles = 10
	}
	space := SearchSpace()
	folds := InnerFolds(train)
	// score measures enabled + extra on held-back training sessions: each inner fold is
	// encoded with options built (a dictionary learned, say) on the other fold, so no
	// probe is scored on a session its configuration was fitted to.
	score := func(enabled []Improvement) (*a2c.Result, error) {
		total := &a2c.Result{Lossless: true}
		for f := range folds {
			opt := Build(enabled, folds[1-f], cfg.Counter)
			res, err := a2c.Measure(ctx, folds[f], opt, cfg.Counter, cfg.Encoding, nil, nil)
			if err != nil {
				return nil, err
			}
			total.Sessions += res.Sessions
			total.RawTokens += res.RawTokens
			total.FullCostTokens += res.FullCostTokens
			total.Lossless = total.Lossless && res.Lossless
			total.LossyRecords += res.LossyRecords
		}
		total.Saving = saving(total.FullCostTokens, total.RawTokens)
		return total, nil
	}
	var enabledIms []Improvement
	base, err := score(nil)
	if err != nil {
		return nil, nil, err
	}
	sel.Probes = append(sel.Probes, Probe{Cycle: 0, Config: "baseline", RawTokens: base.RawTokens,
		FullCostTokens: base.FullCostTokens, Saving: base.Saving, Lossless: base.Lossless, Outcome: "the starting point"})
	curCost := base.FullCostTokens
	enabled := map[string]bool{}
	var names []string
	stale := 0
	for cycle := 1; cycle <= maxCycles && stale < 2; cycle++ {
		sel.Cycles = cycle
		type result struct {
			im  Improvement
			res *a2c.Result
		}
		var probes []result
		var todo []Improvement
		for _, im := range space {
			if !enabled[im.Name] {
				todo = append(todo, im)
			}
		}
		if len(todo) == 0 {
			break
		}
		for i, im := range todo {
			if cfg.Progress != nil {
				cfg.Progress(fmt.Sprintf("seed %d cycle %d: %s", seed, cycle, im.label()), i, len(todo))
			}
			res, err := score(append(append([]Improvement{}, enabledIms...), im))
			if err != nil {
				return nil, nil, err
			}
			probes = append(probes, result{im, res})
		}
		best := -1
		for i, p := range probes {
			if !p.res.Lossless {
				continue
			}
			if best < 0 || p.res.FullCostTokens < probes[best].res.FullCostTokens {
				best = i
			}
		}
		improved := best >= 0 && probes[best].res.FullCostTokens < curCost
		for i, p := range probes {
			pr := Probe{Cycle: cycle, Config: configName(append(append([]string{}, names...), p.im.label())), Added: p.im.label(),
				RawTokens: p.res.RawTokens, FullCostTokens: p.res.FullCostTokens, Saving: p.res.Saving, Lossless: p.res.Lossless}
			switch {
			case !p.res.Lossless:
				pr.Outcome = fmt.Sprintf("not byte-exact on %d records: cannot win", p.res.LossyRecords)
			case i == best && improved:
				pr.Outcome = "won"
			case p.res.FullCostTokens >= curCost:
				pr.Outcome = fmt.Sprintf("no gain: %+d tokens against the current configuration", p.res.FullCostTokens-curCost)
			default:
				pr.Outcome = fmt.Sprintf("beaten by %s by %d tokens", probes[best].im.label(), p.res.FullCostTokens-probes[best].res.FullCostTokens)
			}
			sel.Probes = append(sel.Probes, pr)
		}
		if !improved {
			stale++
			continue
		}
		stale = 0
		curCost = probes[best].res.FullCostTokens
		enabled[probes[best].im.Name] = true
		enabledIms = append(enabledIms, probes[best].im)
		names = append(names, probes[best].im.label())
	}
	// The winner is rebuilt on the whole training split for the test measurement.
	cur := Build(enabledIms, train, cfg.Counter)
	sel.Enabled = names
	if sel.Enabled == nil {
		sel.Enabled = []string{}
	}
	sel.options = cur
	return sel, test, nil
}

// InnerFolds deals the training sessions alternately into two folds, in order; each
// probe is scored on each fold with options fitted on the other.
func InnerFolds(train []a2c.Input) [2][]a2c.Input {
	var f [2][]a2c.Input
	for i := range train {
		f[i%2] = append(f[i%2], train[i])
	}
	return f
}

// Build returns the options with the improvements applied in order, fitted (where an
// improvement learns, like the dictionary) on fit.
func Build(ims []Improvement, fit []a2c.Input, c a2c.Counter) a2c.Options {
	o := a2c.Options{Counter: c}
	for _, im := range ims {
		im.apply(&o, fit)
	}
	return o
}

// Lookup returns the improvement of the search space with the given label (as Probe.Added
// and Results.Winner write it).
func Lookup(label string) (Improvement, bool) {
	for _, im := range SearchSpace() {
		if im.label() == label {
			return im, true
		}
	}
	return Improvement{}, false
}

func configName(names []string) string {
	if len(names) == 0 {
		return "baseline"
	}
	s := "baseline"
	for _, n := range names {
		s += " + " + n
	}
	return s
}

// Fingerprint is the SHA-256 of the sessions' canonical form: each session's id and its
// records' canonical JSON, one per line.
func Fingerprint(ss []trace.Session) string {
	h := sha256.New()
	for i := range ss {
		v := ss[i].Value()
		h.Write(trace.AppendCanonical(nil, &v))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
