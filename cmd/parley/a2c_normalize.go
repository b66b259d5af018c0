package main

import (
	"bufio"
	"context"

	"github.com/parleyhq/parley/trace"
)

const a2cNormalizeDescription = `
Read a source with an adapter and print its canonical records: one session per line,
{"id":…,"records":[…]}, in canonical JSON (sorted keys, no whitespace, numbers exactly as
the source wrote them). This is what encode reads and decode writes, and what
"lossless" is measured against. The mapping from each source format is documented in
the trace package (go doc github.com/parleyhq/parley/trace).`

func runA2CNormalize(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "a2c normalize", "a2c normalize --adapter A --source PATH", a2cNormalizeDescription,
		"  parley a2c normalize --adapter openai --source ../shared/corpus/openai > tau.jsonl\n  parley a2c normalize --adapter synthetic --seed 7 --sessions 3")
	sf := addSourceFlags(fs)
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	ss, err := sf.load(ctx, e, "normalize")
	if err != nil {
		return err
	}
	w := bufio.NewWriter(e.stdout)
	for i := range ss {
		v := ss[i].Value()
		w.Write(trace.AppendCanonical(nil, &v))
		w.WriteByte('\n')
	}
	return w.Flush()
}
