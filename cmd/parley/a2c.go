package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley/a2c"
	"github.com/parleyhq/parley/a2c/optimize"
	"github.com/parleyhq/parley/bpe"
	"github.com/parleyhq/parley/toon"
	"github.com/parleyhq/parley/trace"
)

const a2cDescription = `
a2c is parley's lossless codec for machine handoffs (tool calls, results, plans). It
turns agent traces into canonical records, encodes a session's records into the a2c/1
text format and back, byte for byte, and measures what that saves in real tokens, with
its own decode instructions (and any dictionary) charged against it.

Subcommands:
  normalize   read a source with an adapter, print canonical session JSONL
  encode      session JSONL (or record JSONL) on stdin → a2c/1 payloads on stdout
  decode      a2c/1 payloads on stdin → canonical session JSONL on stdout
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

// sourceFlags are the flags every subcommand that reads a source shares.
type sourceFlags struct {
	adapter  *string
	source   *string
	seed     *int64
	sessions *int
}

func addSourceFlags(fs interface {
	String(string, string, string) *string
	Int64(string, int64, string) *int64
	Int(string, int, string) *int
}) sourceFlags {
	return sourceFlags{
		adapter:  fs.String("adapter", "", "how to read the source: "+strings.Join(trace.Adapters, ", ")),
		source:   fs.String("source", "", "a file or a folder (read recursively); not for synthetic"),
		seed:     fs.Int64("seed", 1, "synthetic only: the generator's seed"),
		sessions: fs.Int("sessions", 40, "synthetic only: how many sessions to generate"),
	}
}

func (sf sourceFlags) load(ctx context.Context, e *env, verb string) ([]trace.Session, error) {
	if *sf.adapter == "" {
		return nil, usageErrorf("--adapter is required (%s)", strings.Join(trace.Adapters, ", "))
	}
	if *sf.adapter != "synthetic" && *sf.source == "" {
		return nil, usageErrorf("--source is required for the %s adapter", *sf.adapter)
	}
	known := false
	for _, a := range trace.Adapters {
		known = known || a == *sf.adapter
	}
	if !known {
		return nil, usageErrorf("unknown adapter %q (%s)", *sf.adapter, strings.Join(trace.Adapters, ", "))
	}
	files, skipped := 0, 0
	ss, err := trace.Load(ctx, *sf.adapter, *sf.source, trace.LoadOptions{
		SyntheticSeed: *sf.seed, SyntheticSessions: *sf.sessions,
		Progress: func(string) { files++ },
		// A file the adapter cannot read says nothing about the codec: report it and
		// go on with the rest.
		Skip: func(path string, err error) {
			skipped++
			fmt.Fprintf(e.stderr, "%s: skipping %s: %v\n", verb, path, err)
		},
	})
	if err != nil {
		return nil, err
	}
	if len(ss) == 0 {
		return nil, &exitError{code: 1, msg: fmt.Sprintf("no sessions found in %s with the %s adapter", *sf.source, *sf.adapter)}
	}
	fmt.Fprintf(e.stderr, "%s: %d sessions from %d files", verb, len(ss), files-skipped)
	if skipped > 0 {
		fmt.Fprintf(e.stderr, " (%d skipped)", skipped)
	}
	fmt.Fprintln(e.stderr)
	return ss, nil
}

func loadDict(path string) (*a2c.Dictionary, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return &a2c.Dictionary{Text: strings.TrimSuffix(string(b), "\n")}, nil
}

// codecOptions builds the default codec configuration of the encode, verify and benchmark
// subcommands from their --encoding and --dict flags.
func codecOptions(encName, dictPath string) (a2c.Options, *bpe.Encoding, error) {
	enc, err := counterFor(encName)
	if err != nil {
		return a2c.Options{}, nil, err
	}
	dict, err := loadDict(dictPath)
	if err != nil {
		return a2c.Options{}, nil, err
	}
	opt := a2c.Default(enc)
	opt.Dictionary = dict
	return opt, enc, nil
}

func counterFor(name string) (*bpe.Encoding, error) {
	if !knownEncoding(name) {
		return nil, usageErrorf("unknown encoding %q: use %s", name, strings.Join(bpe.Names(), " or "))
	}
	return bpe.Get(name)
}

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

// readSessions reads session lines ({"id","records"}) or record lines ({"kind",…}; they
// form one session named "stdin").
func readSessions(r io.Reader) ([]a2c.Input, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<30)
	var out []a2c.Input
	loose := -1
	n := 0
	for sc.Scan() {
		n++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		v, err := trace.ParseJSON(b)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if recs, ok := v.Get("records"); ok && recs.Kind == trace.Array {
			s, err := trace.SessionFromValue(&v)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			out = append(out, a2c.Input{ID: s.ID, Records: a2c.RecordValues(&s)})
			continue
		}
		if v.Kind != trace.Object {
			return nil, fmt.Errorf("line %d: want a session or a record object", n)
		}
		if loose < 0 {
			loose = len(out)
			out = append(out, a2c.Input{ID: "stdin"})
		}
		out[loose].Records = append(out[loose].Records, v)
	}
	return out, sc.Err()
}

const a2cEncodeDescription = `
Encode sessions into a2c/1. Standard input holds session lines as normalize prints them
({"id":…,"records":[…]}) or bare record lines (one JSON object per line, taken as one
session). Standard output gets one payload per session: a header line "a2c/1 <id>" and
one line per record. Any JSON object per line round-trips, not only trace records.

--explain writes each session's decode instructions (the text a reader needs, charged in
full by benchmark) to standard error. --encoding picks the tokenizer used to keep only the
references that save tokens. --dict uses a dictionary from 'parley a2c train'; decode
needs the same file.`

func runA2CEncode(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "a2c encode", "a2c encode [--encoding E] [--dict FILE] [--explain] < sessions.jsonl", a2cEncodeDescription,
		"  parley a2c normalize --adapter openai --source tau.jsonl | parley a2c encode > tau.a2c\n  parley a2c encode --explain < session.jsonl")
	encName := fs.String("encoding", "cl100k_base", "tokenizer for token-aligned choices: cl100k_base or o200k_base")
	dictPath := fs.String("dict", "", "a dictionary file written by 'parley a2c train'")
	explain := fs.Bool("explain", false, "write each session's decode instructions to stderr")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	opt, _, err := codecOptions(*encName, *dictPath)
	if err != nil {
		return err
	}
	in, err := readSessions(e.stdin)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(e.stdout)
	for _, s := range in {
		if err := ctx.Err(); err != nil {
			return err
		}
		out, err := a2c.EncodeSession(s.ID, s.Records, opt)
		if err != nil {
			return fmt.Errorf("session %s: %w", s.ID, err)
		}
		w.WriteString(out.Payload())
		if *explain {
			fmt.Fprintf(e.stderr, "%s\n%s\n\n", out.Header, out.Instructions)
		}
	}
	return w.Flush()
}

const a2cDecodeDescription = `
Decode a2c/1 payloads (as encode writes them, one or many sessions) from standard input
and print each session as a canonical JSON line {"id":…,"records":[…]}. Records that are
not trace records (any JSON object encodes) come out as they went in, in canonical form.`

func runA2CDecode(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "a2c decode", "a2c decode [--dict FILE] < payloads.a2c", a2cDecodeDescription,
		"  parley a2c decode < tau.a2c > tau.jsonl\n  parley a2c encode < s.jsonl | parley a2c decode | cmp - s.jsonl")
	dictPath := fs.String("dict", "", "the dictionary the payloads were encoded with")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	dict, err := loadDict(*dictPath)
	if err != nil {
		return err
	}
	data, err := io.ReadAll(e.stdin)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(data)) > 0 && !bytes.HasPrefix(data, []byte(a2c.Magic)) {
		return &exitError{code: 1, msg: "input does not start with an a2c/1 header"}
	}
	w := bufio.NewWriter(e.stdout)
	for i, p := range a2c.SplitStream(string(data)) {
		if err := ctx.Err(); err != nil {
			return err
		}
		id, recs, err := a2c.DecodeSession(p, dict)
		if err != nil {
			return fmt.Errorf("payload %d (%s): %w", i+1, id, err)
		}
		v := trace.Value{Kind: trace.Object, Members: []trace.Member{
			{Key: "id", Value: trace.StringValue(id)},
			{Key: "records", Value: trace.Value{Kind: trace.Array, Items: recs}},
		}}
		w.Write(trace.AppendCanonical(nil, &v))
		w.WriteByte('\n')
	}
	return w.Flush()
}

const a2cVerifyDescription = `
Round-trip every session of a source through a2c/1 with the default configuration:
normalize, encode, decode, and compare the canonical JSON of every record byte for byte.
Prints the counts; exits 1 and names the sessions when any record differs.`

func runA2CVerify(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "a2c verify", "a2c verify --adapter A --source PATH [--dict FILE]", a2cVerifyDescription,
		"  parley a2c verify --adapter swe-agent --source ../shared/corpus/swe-agent\n  parley a2c verify --adapter synthetic --seed 3")
	sf := addSourceFlags(fs)
	encName := fs.String("encoding", "cl100k_base", "tokenizer for token-aligned choices")
	dictPath := fs.String("dict", "", "a dictionary file written by 'parley a2c train'")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	opt, _, err := codecOptions(*encName, *dictPath)
	if err != nil {
		return err
	}
	ss, err := sf.load(ctx, e, "verify")
	if err != nil {
		return err
	}
	records, bad, badSessions := 0, 0, 0
	for i := range ss {
		if err := ctx.Err(); err != nil {
			return err
		}
		recs := a2c.RecordValues(&ss[i])
		records += len(recs)
		_, n, err := a2c.Verify(ss[i].ID, recs, opt)
		if err != nil || n > 0 {
			badSessions++
			bad += max(n, 1)
			msg := fmt.Sprintf("%d records differ", n)
			if err != nil {
				msg = err.Error()
			}
			fmt.Fprintf(e.stdout, "DIFF %s: %s\n", ss[i].ID, msg)
		}
	}
	fmt.Fprintf(e.stdout, "sessions %d  records %d  byte-exact %d  differing %d\n", len(ss), records, records-bad, bad)
	if bad > 0 {
		return &exitError{code: 1, msg: fmt.Sprintf("%d records in %d sessions did not round-trip", bad, badSessions)}
	}
	return nil
}

const a2cBenchmarkDescription = `
Measure a2c/1 on a source in real tokens. raw = the canonical JSON of every record;
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
	folds := fs.Int("dict-folds", 2, "without --dict: learn dictionaries by k-fold cross-validation (each session encoded with a dictionary learned on the other folds, each charged once); 0 for no dictionary")
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	perSession := fs.Bool("sessions-table", false, "also list every session's figures")
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
	var res *a2c.Result
	if opt.Dictionary == nil && *folds >= 2 {
		if opt.DictCharge != a2c.DictOnce {
			return usageErrorf("--dict-folds charges each fold's dictionary once; use --dict-folds 0 with --dict-charge session")
		}
		res, err = a2c.MeasureFolds(ctx, a2c.Inputs(ss), opt, enc, *encName, benchmarkBaselines(), *folds, a2c.TrainOptions{}, progress)
	} else {
		res, err = a2c.Measure(ctx, a2c.Inputs(ss), opt, enc, *encName, benchmarkBaselines(), progress)
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
		fmt.Fprint(e.stdout, res.Table(fmt.Sprintf("a2c/1 on %s %s", *sf.adapter, *sf.source)))
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

// benchmarkBaselines are the renderings a2c is compared with besides canonical JSON.
func benchmarkBaselines() []a2c.Baseline {
	return []a2c.Baseline{a2c.MinifiedJSON, a2c.PrettyJSON, {Name: "toon", Render: func(recs []trace.Value) (string, error) {
		text, err := a2c.MinifiedJSON.Render(recs)
		if err != nil {
			return "", err
		}
		v, err := toon.ParseJSON([]byte(text))
		if err != nil {
			return "", err
		}
		return toon.Encode(v)
	}}}
}

const a2cTrainDescription = `
Learn a dictionary from training data: the lines and values (system prompts, tool
descriptions, boilerplate) that recur in at least a fifth of the sessions, most bytes
saved first, up to --max-bytes, written as text to --output. benchmark, encode, decode and verify take
it with --dict. Train on data you will not measure on: a dictionary learned from the test
set flatters the codec ('parley a2c optimize' splits by trajectory for you). benchmark
charges the dictionary's tokens in full, once by default.`

func runA2CTrain(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "a2c train", "a2c train --adapter A --source PATH --output FILE [--max-bytes N]", a2cTrainDescription,
		"  parley a2c train --adapter openai --source train.jsonl --output tau.dict\n  parley a2c benchmark --adapter openai --source test.jsonl --dict tau.dict")
	sf := addSourceFlags(fs)
	output := fs.String("output", "", "where to write the dictionary (required)")
	maxBytes := fs.Int("max-bytes", 8192, "the dictionary's size limit in bytes")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	if *output == "" {
		return usageErrorf("--output is required")
	}
	ss, err := sf.load(ctx, e, "train")
	if err != nil {
		return err
	}
	var recs [][]trace.Value
	for i := range ss {
		recs = append(recs, a2c.RecordValues(&ss[i]))
	}
	d := a2c.Train(recs, a2c.TrainOptions{MaxBytes: *maxBytes})
	if err := os.WriteFile(*output, []byte(d.Text+"\n"), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "dictionary: %d bytes from %d sessions → %s\n", len(d.Text), len(ss), *output)
	return nil
}

const a2cOptimizeDescription = `
Find the best a2c configuration for a corpus without looking at the sessions it is judged
on, and write a release folder that anyone can check.

The sessions are split by whole trajectory (test: 30%, drawn from --seed). The search
starts from the baseline (canonical JSON lines, every mechanism off) and, each cycle,
probes every improvement not yet enabled (compact schema with raw or escaped newlines, bare values,
embedded JSON, value references, splices, token alignment, a dictionary learned on the
training split) with each of its settings, on the training split only. The probe with
the lowest full cost wins the cycle; a probe that is not byte-exact on every record
cannot win. The search stops after two cycles without improvement or at --max-cycles.
The winner is measured once on the test split (against canonical, minified and pretty
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
		Version: parleyVersion(), Counter: enc, Baselines: benchmarkBaselines(), Progress: progressPrinter(e)}
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

const a2cCheckDescription = `
Check a release folder written by 'parley a2c optimize': recompute the arithmetic of
results.json (full cost = payload + instructions + dictionary, every saving, the
per-session sums, the median break-even and the never count, the stability figures),
the verdict against its thresholds, and that report.md states the same figures. With
--adapter and --source it also recomputes the corpus fingerprint and compares it with
the manifest. Exits 1 and names every inconsistency.`

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
