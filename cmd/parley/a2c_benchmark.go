package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/parleyhq/parley/a2c"
	"github.com/parleyhq/parley/trace"
)

const a2cBenchmarkDescription = `
Measure a2c/2 on a source in real tokens. raw = the canonical JSON of every record;
full cost = payload + every session's decode instructions + the dictionary (in full: once
for the whole set by default, or for every session that uses it with --dict-charge
session); saving = 1 − full/raw. Also against the same records as one minified
JSON array, pretty JSON (indent 2) and TOON.

Dictionary: with --dict, that file. Otherwise --dict-folds k (default 2) learns one by
cross-validation, so no session is ever encoded with a dictionary that saw it: the
sessions are dealt into k folds and each fold is encoded with a dictionary learned on
the others, each dictionary charged in full once. --dict-folds 0 measures without one. Break-even of a session: the first handoff k
where the cumulative full cost (instructions charged with the first handoff) is at most
the cumulative raw cost; the median over sessions and the sessions that never break
even are reported. Every session is verified byte for byte while it is measured.

--hold-out N measures only the sessions held out by id (those whose FNV-1a hash of the id
is divisible by N; the same ones on every machine) and learns the dictionary on the
others alone, charged once: figures on sessions that played no part in any choice.

The plain output is a table; --json prints one object with encoding, sessions,
handoffs, raw_tokens, payload_tokens, instruction_tokens, dictionary_tokens,
full_cost_tokens, saving, median_break_even (null = never), never_break_even, lossless,
baselines and dictionary_folds.`

func runA2CBenchmark(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "a2c benchmark", "a2c benchmark --adapter A --source PATH [--encoding E] [--dict FILE] [--json]", a2cBenchmarkDescription,
		"  parley a2c benchmark --adapter toolbench --source ../shared/corpus/toolbench\n  parley a2c benchmark --adapter openai --source ../shared/corpus/openai --encoding o200k_base --json")
	sf := addSourceFlags(fs)
	encName := fs.String("encoding", "cl100k_base", "the tokenizer: cl100k_base (comparable with published figures) or o200k_base")
	dictPath := fs.String("dict", "", "a dictionary file written by 'parley a2c train'")
	dictCharge := fs.String("dict-charge", "once", "how the dictionary is charged: once (in full, once for all sessions: a deployment ships it once) or session (in full to every session that uses it)")
	folds := fs.Int("dict-folds", a2c.DefaultDictFolds, "without --dict: learn dictionaries by k-fold cross-validation (each session encoded with a dictionary learned on the other folds, each charged once); 0 for no dictionary")
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	perSession := fs.Bool("sessions-table", false, "also list every session's figures")
	holdOut := fs.Int("hold-out", 0, "measure only the sessions whose id hashes to 0 mod N, with a dictionary learned on the rest (0: all sessions)")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	opt, enc, err := codecOptions(*encName, *dictPath)
	if err != nil {
		return err
	}
	ss, err := sf.load(ctx, e, "benchmark")
	if err != nil {
		return err
	}
	switch *dictCharge {
	case "once":
		opt.DictCharge = a2c.DictOnce
	case "session":
		opt.DictCharge = a2c.DictPerSession
	default:
		return usageErrorf("--dict-charge must be once or session, not %q", *dictCharge)
	}
	step := max(len(ss)/10, 1)
	progress := func(done, total int) {
		if done%step == 0 || done == total {
			fmt.Fprintf(e.stderr, "benchmark: %d/%d sessions\n", done, total)
		}
	}
	if opt.Dictionary == nil && *folds >= 2 && opt.DictCharge != a2c.DictOnce {
		return usageErrorf("--dict-folds charges each fold's dictionary once; use --dict-folds 0 with --dict-charge session")
	}
	if *holdOut < 0 || *holdOut == 1 {
		return usageErrorf("--hold-out must be 0 or at least 2, not %d", *holdOut)
	}
	var res *a2c.Result
	if *holdOut >= 2 {
		train, held := a2c.HoldOut(a2c.Inputs(ss), *holdOut)
		if len(held) == 0 || len(train) == 0 {
			return &exitError{code: 1, msg: fmt.Sprintf("--hold-out %d leaves %d training and %d held-out sessions: need both", *holdOut, len(train), len(held))}
		}
		fmt.Fprintf(e.stderr, "benchmark: %d sessions held out, %d for training\n", len(held), len(train))
		if opt.Dictionary == nil && *folds >= 2 {
			recs := make([][]trace.Value, len(train))
			for i := range train {
				recs[i] = train[i].Records
			}
			opt.Dictionary = a2c.Train(recs, a2c.TrainOptions{Counter: enc})
		}
		res, err = a2c.Measure(ctx, held, opt, enc, *encName, a2c.StandardBaselines(), progress)
	} else {
		res, err = a2c.Benchmark(ctx, a2c.Inputs(ss), a2c.BenchmarkOptions{Options: opt, Counter: enc, Encoding: *encName, Folds: *folds, Progress: progress})
	}
	if err != nil {
		return err
	}
	if *asJSON {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s\n", b)
	} else {
		fmt.Fprint(e.stdout, res.Table(fmt.Sprintf("a2c/2 on %s %s", *sf.adapter, *sf.source)))
		if *perSession {
			fmt.Fprintf(e.stdout, "\n  %-60s %8s %8s %8s %6s\n", "session", "handoffs", "raw", "full", "b-e")
			for _, s := range res.PerSession {
				be := "never"
				if s.BreakEven > 0 {
					be = fmt.Sprint(s.BreakEven)
				}
				fmt.Fprintf(e.stdout, "  %-60s %8d %8d %8d %6s\n", s.ID, s.Handoffs, s.RawTokens, s.FullCostTokens, be)
			}
		}
	}
	if !res.Lossless {
		return &exitError{code: 1, msg: fmt.Sprintf("%d records did not round-trip byte for byte", res.LossyRecords)}
	}
	return nil
}
