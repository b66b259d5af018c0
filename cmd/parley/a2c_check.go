package main

import (
	"context"
	"fmt"

	"github.com/parleyhq/parley/a2c/optimize"
	"github.com/parleyhq/parley/trace"
)

const a2cCheckDescription = `
Check a release folder written by 'parley a2c optimize': recompute the arithmetic of
results.json (full cost = payload + instructions + dictionary, every saving, the
per-session sums, the median break-even and the never count, the stability figures),
the verdict against its thresholds, and that report.md states the same figures. With
--adapter and --source it also recomputes the corpus fingerprint and compares it with
the manifest, rebuilds the winner (fitted on the training sessions results.json names),
re-encodes every test session and recounts its raw tokens, payload (as shipped, newlines
included), instructions and the dictionary from the shipped text. Exits 1 and names every
inconsistency.`

func runA2CCheck(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "a2c check", "a2c check DIR [--adapter A --source PATH]", a2cCheckDescription,
		"  parley a2c check release\n  parley a2c check release --adapter toolbench --source ../shared/corpus/toolbench")
	sf := addSourceFlags(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErrorf("give exactly one release folder")
	}
	var ss []trace.Session
	if *sf.adapter != "" {
		if ss, err = sf.load(ctx, e, "check"); err != nil {
			return err
		}
	}
	bad, err := optimize.Check(pos[0], ss)
	if err != nil {
		return err
	}
	for _, b := range bad {
		fmt.Fprintln(e.stdout, "FAIL "+b)
	}
	if len(bad) > 0 {
		return &exitError{code: 1, msg: fmt.Sprintf("%d inconsistencies in %s", len(bad), pos[0])}
	}
	fmt.Fprintf(e.stdout, "ok: %s is consistent\n", pos[0])
	return nil
}
