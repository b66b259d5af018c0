package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley/a2c"
	"github.com/parleyhq/parley/a2c/optimize"
)

const a2cOptimizeDescription = `
Find the best a2c configuration for a corpus without looking at the sessions it is judged
on, and write a release folder that anyone can check.

The sessions are split by whole trajectory (test: 30%, drawn from --seed). The search
starts from the baseline (canonical JSON lines, every mechanism off) and, each cycle,
probes every improvement not yet enabled (compact schema with raw or escaped newlines, bare values,
embedded JSON, value references, splices, token alignment, per-session adapt, a
dictionary) with each of its settings, on the training split only, and there on sessions
it was not fitted to: the training sessions are dealt alternately into two folds, and
each probe is fitted (a dictionary learned) on one fold and measured on the other, both
ways. The probe with the lowest held-back full cost wins the cycle; a probe that is not byte-exact on every record
cannot win. The search stops after two cycles without improvement or at --max-cycles.
The winner, rebuilt on the whole training split, is measured once on the test split (against canonical, minified and pretty
JSON and TOON), and the selection is re-run on the --retest seeds to show the spread.

Verdict: practical when the test saving is at least 15% and the median session breaks
even within 10 handoffs; research-only otherwise.

--output gets report.md, results.json (everything in the report), protocol.json (the
winning options), manifest.json (seed, corpus fingerprint, search space, version,
encoding, and the only clock and machine values) and two SVG charts. The same source,
seed and version give byte-identical results.json and report.md.`

func runA2COptimize(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "a2c optimize", "a2c optimize --adapter A [--source PATH] --seed N --output DIR [--encoding E] [--max-cycles 10] [--retest 11,23,47]",
		a2cOptimizeDescription,
		"  parley a2c optimize --adapter toolbench --source ../shared/corpus/toolbench --seed 7 --output release\n  parley a2c optimize --adapter synthetic --seed 3 --sessions 30 --output /tmp/rel --retest 5\n  parley a2c check release --adapter toolbench --source ../shared/corpus/toolbench")
	sf := addSourceFlags(fs)
	output := fs.String("output", "", "the release folder to write (required)")
	encName := fs.String("encoding", "cl100k_base", "the tokenizer: cl100k_base or o200k_base")
	maxCycles := fs.Int("max-cycles", 10, "the most cycles the search runs")
	retest := fs.String("retest", "11,23,47", "comma-separated seeds the selection is re-run on (empty for none)")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	if *output == "" {
		return usageErrorf("--output is required")
	}
	var seeds []int64
	for _, f := range strings.Split(*retest, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return usageErrorf("--retest: %q is not a seed", f)
		}
		seeds = append(seeds, n)
	}
	enc, err := counterFor(*encName)
	if err != nil {
		return err
	}
	ss, err := sf.load(ctx, e, "optimize")
	if err != nil {
		return err
	}
	if len(ss) < 2 {
		return &exitError{code: 1, msg: "optimize needs at least two sessions (one to train on, one to test)"}
	}
	started := time.Now()
	cfg := &optimize.Config{Adapter: *sf.adapter, Encoding: *encName, Seed: *sf.seed, MaxCycles: *maxCycles, Retest: seeds,
		Version: parleyVersion(), Counter: enc, Baselines: a2c.StandardBaselines(), Progress: progressPrinter(e)}
	res, sel, err := optimize.Run(ctx, cfg, ss)
	if err != nil {
		return err
	}
	fmt.Fprint(e.stderr, "\n")
	if err := optimize.Write(*output, res, sel, optimize.NewManifest(cfg, *sf.source, ss, started, time.Since(started))); err != nil {
		return err
	}
	mb := "never"
	if res.MedianBreakEven != nil {
		mb = fmt.Sprintf("%g", *res.MedianBreakEven)
	}
	fmt.Fprintf(e.stdout, "%s: full cost %d of %d raw tokens on the test split (saving %.1f%%), median break-even %s, spread %.1f points over %d seeds; verdict %s\nwinner: %s\nrelease folder: %s\n",
		*sf.adapter, res.FullCostTokens, res.RawTokens, 100*res.Saving, mb, 100*res.Stability.Spread, len(res.Stability.Savings), res.Verdict,
		strings.Join(append([]string{"baseline"}, res.Winner...), " + "), *output)
	return nil
}

// progressPrinter draws a bar when standard error is a terminal and prints plain lines
// otherwise (one per step, so logs stay readable).
func progressPrinter(e *env) func(step string, done, total int) {
	tty := false
	if f, ok := e.stderr.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return func(step string, done, total int) {
		if !tty {
			fmt.Fprintf(e.stderr, "optimize: %s (%d/%d)\n", step, done+1, total)
			return
		}
		const width = 24
		n := 0
		if total > 0 {
			n = width * (done + 1) / total
		}
		fmt.Fprintf(e.stderr, "\r[%s%s] %-60.60s", strings.Repeat("#", n), strings.Repeat(" ", width-n), step)
	}
}
