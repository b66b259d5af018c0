package main

import (
	"context"
	"fmt"

	"github.com/parleyhq/parley/a2c"
	"github.com/parleyhq/parley/trace"
)

const a2cTrainDescription = `
Learn a dictionary from training data: the lines and values (system prompts, tool
descriptions, boilerplate), objects and arrays as the payload writes them (a tool's
definition), and runs of payload text (record frames), that recur in at least two
fifths of the sessions, most bytes saved first, up to --max-bytes; then it keeps only
the spans that the splices of that many training sessions copy and that saved three
times their own tokens there (counted with --encoding), and writes them as text to
--output. benchmark, encode, decode and verify take it with --dict. Train on data you
will not measure on: a dictionary learned from the test set flatters the codec ('parley
a2c optimize' splits by trajectory for you). benchmark charges the dictionary's tokens
in full, once by default.`

func runA2CTrain(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "a2c train", "a2c train --adapter A --source PATH --output FILE [--max-bytes N] [--encoding E]", a2cTrainDescription,
		"  parley a2c train --adapter openai --source train.jsonl --output tau.dict\n  parley a2c benchmark --adapter openai --source test.jsonl --dict tau.dict")
	sf := addSourceFlags(fs)
	output := fs.String("output", "", "where to write the dictionary (required)")
	maxBytes := fs.Int("max-bytes", a2c.DefaultMaxBytes, "the dictionary's size limit in bytes")
	encName := fs.String("encoding", "cl100k_base", "the tokenizer the dictionary is pruned with (the spans that splices of enough training sessions copy): cl100k_base or o200k_base")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	if *output == "" {
		return usageErrorf("--output is required")
	}
	enc, err := counterFor(*encName)
	if err != nil {
		return err
	}
	ss, err := sf.load(ctx, e, "train")
	if err != nil {
		return err
	}
	var recs [][]trace.Value
	for i := range ss {
		recs = append(recs, a2c.RecordValues(&ss[i]))
	}
	d := a2c.Train(recs, a2c.TrainOptions{MaxBytes: *maxBytes, Counter: enc})
	if err := d.WriteFile(*output); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "dictionary: %d bytes from %d sessions → %s\n", len(d.Text), len(ss), *output)
	return nil
}
