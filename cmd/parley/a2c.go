// The a2c subcommands: this file holds the group's help and dispatch; each subcommand is in
// a2c_<name>.go, and the flags they share (--adapter/--source, --encoding/--dict) in
// a2c_flags.go.

package main

import "context"

const a2cDescription = `
a2c is parley's lossless codec for machine handoffs (tool calls, results, plans). It
turns agent traces into canonical records, encodes a session's records into the a2c/2
text format and back, byte for byte, and measures what that saves in real tokens, with
its own decode instructions (and any dictionary) charged against it.

Subcommands:
  normalize   read a source with an adapter, print canonical session JSONL
  encode      session JSONL (or record JSONL) on stdin → a2c/2 payloads on stdout
  decode      a2c/2 payloads on stdin → canonical session JSONL on stdout
  verify      round-trip every session of a source; exit 1 on any byte difference
  benchmark   full cost against canonical JSON, minified and pretty JSON and TOON
  train       learn a dictionary from training data (for --dict)
  optimize    search the configuration on a training split, measure it on the test
              split, re-test on more seeds, write a release folder
  check       re-derive a release folder's figures and verdict; exit 1 on any mismatch

Adapters: toolbench (ToolBench/StableToolBench answer files), openai (JSONL, one
{"id","messages"} trajectory per line), swe-agent (.traj), synthetic (seeded; no
--source). Run 'parley a2c <subcommand> --help' for each one's flags.`

const a2cExamples = `  parley a2c normalize --adapter openai --source ../shared/corpus/openai | head -1
  parley a2c verify --adapter toolbench --source ../shared/corpus/toolbench
  parley a2c benchmark --adapter swe-agent --source ../shared/corpus/swe-agent --json`

func runA2C(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fs := newFlags(e, "a2c", "a2c <subcommand> [flags]", a2cDescription, a2cExamples)
		fs.Usage()
		if len(args) == 0 {
			return usageErrorf("a subcommand is required")
		}
		return nil
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "normalize":
		return runA2CNormalize(ctx, e, rest)
	case "encode":
		return runA2CEncode(ctx, e, rest)
	case "decode":
		return runA2CDecode(ctx, e, rest)
	case "verify":
		return runA2CVerify(ctx, e, rest)
	case "benchmark":
		return runA2CBenchmark(ctx, e, rest)
	case "train":
		return runA2CTrain(ctx, e, rest)
	case "optimize":
		return runA2COptimize(ctx, e, rest)
	case "check":
		return runA2CCheck(ctx, e, rest)
	}
	return usageErrorf("unknown a2c subcommand %q (normalize, encode, decode, verify, benchmark, train, optimize, check)", sub)
}
