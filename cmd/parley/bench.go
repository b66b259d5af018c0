package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/parleyhq/parley/bench"
	"github.com/parleyhq/parley/bpe"
	"github.com/parleyhq/parley/figure"
)

// benchCommands is the table of `parley bench` subcommands, in the order help lists them.
func benchCommands() []command {
	return []command{
		{"formats", "the format study's tables: tokens per message and per fact, grammar tax, construct costs", runBenchFormats},
		{"server", "load the room server: durable posts per second, post latency, history read cost, memory", runBenchServer},
		{"readers", "the study's reader tests against a model: fidelity per fact and the action, per format", runBenchReaders},
		{"cache", "replay a room to a model and measure its prompt cache from the provider's usage", runBenchCache},
	}
}

func runBench(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help" {
		printBenchUsage(e.stdout)
		if len(args) == 0 {
			return usageErrorf("a subcommand is required")
		}
		return nil
	}
	for _, c := range benchCommands() {
		if c.name == args[0] {
			return c.run(ctx, e, args[1:])
		}
	}
	return usageErrorf("unknown bench subcommand %q (have: formats, server, readers, cache)", args[0])
}

func printBenchUsage(w io.Writer) {
	fmt.Fprint(w, "Usage: parley bench <subcommand> [flags]\n\nMeasure message formats, the room server, and (readers, cache) a model of your choosing.\n\nSubcommands:\n")
	for _, c := range benchCommands() {
		fmt.Fprintf(w, "  %-8s  %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, "\nRun 'parley bench <subcommand> --help' for its flags and examples.\n")
}

const benchFormatsDescription = `
Reproduce the format study's tables on its three fixture messages (p1 delegation request,
p2 partial status report, p3 decision proposal; 13 facts each), counting tokens exactly with
o200k_base and cl100k_base:

  - tokens per message and per fact, and thread totals, for prose, pretty JSON (the
    fixture's message.json as is), minified JSON, TOON (parley's encoder, from
    message.json), the room convention, AACP v1.1 and a2c/2 (message.json as a one-record
    session: kind message, from and to from the message, every other member in meta;
    a2c's default options without a tokenizer; decoded back and compared exactly);
  - the grammar tax: the tokens every seat must hold to read a format (the convention text,
    our AACP reader's card, a short TOON primer, a2c's decode instructions; nothing for
    prose and JSON), paid by the R readers and the writer, and the message count after
    which the format's saving per message against pretty JSON, over R readers, has paid
    for it;
  - the cost of single constructs: one instant as extended ISO, basic ISO and unix seconds;
    random and legible ids; an emoji key; common words; a git sha; a UUID.

Files are counted whole, final newline included; minified JSON and TOON get one final
newline like the files they are derived from; an a2c/2 payload ends with one anyway. Under
each tokens table a note compares a2c/2 with minified JSON.

The study folder is --study when given, else ../shared/study when it exists, else the copy
built into parley.`

const benchFormatsExamples = `  parley bench formats
  parley bench formats --readers 2
  parley bench formats --json | jq '.threads[] | select(.encoding == "o200k_base")'
  parley bench formats --svg formats.svg
  parley bench formats --study ./my-study`

func runBenchFormats(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "bench formats", "bench formats [--study DIR] [--readers R] [--json] [--svg FILE]",
		benchFormatsDescription, benchFormatsExamples)
	studyDir := fs.String("study", "", "the study folder: one subfolder per message with facts.json and the format files")
	readers := fs.Int("readers", bench.DefaultReaders, "seats that read every message (the writer holds the grammar too)")
	asJSON := fs.Bool("json", false, "print the results as one JSON object")
	svgFile := fs.String("svg", "", "also write a grouped bar chart of tokens per fact by format to `FILE`")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageErrorf("unexpected argument %q", rest[0])
	}
	if *readers < 1 {
		return usageErrorf("--readers must be at least 1, not %d", *readers)
	}
	_, st, where, err := loadStudy(*studyDir)
	if err != nil {
		return err
	}
	var encs []bench.Encoding
	for _, name := range bpe.Names() {
		enc, err := bpe.Get(name)
		if err != nil {
			return err
		}
		encs = append(encs, enc)
	}
	formats := bench.DefaultFormats()
	res, err := bench.Formats(st, bench.Config{Formats: formats, Encodings: encs, Readers: *readers})
	if err != nil {
		return err
	}
	if *svgFile != "" {
		if err := writeFormatsSVG(*svgFile, res, formats); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "parley bench formats: wrote %s\n", *svgFile)
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	_, err = io.WriteString(e.stdout, formatsText(st, where, res, formats))
	return err
}

// loadStudy opens the study folder (see openStudy) and reads its study; an error names
// where it was looked for.
func loadStudy(dir string) (fs.FS, *bench.Study, string, error) {
	studyFS, where, err := openStudy(dir)
	if err != nil {
		return nil, nil, "", err
	}
	st, err := bench.LoadStudy(studyFS)
	if err != nil {
		return nil, nil, "", fmt.Errorf("%s: %w", where, err)
	}
	return studyFS, st, where, nil
}

// openStudy resolves the study folder: the flag, else ../shared/study, else the embedded copy.
func openStudy(dir string) (fs.FS, string, error) {
	if dir != "" {
		info, err := os.Stat(dir)
		if err != nil {
			return nil, "", fmt.Errorf("study folder: %w", err)
		}
		if !info.IsDir() {
			return nil, "", fmt.Errorf("study folder %s is not a directory", dir)
		}
		return os.DirFS(dir), dir, nil
	}
	const shared = "../shared/study"
	if info, err := os.Stat(shared); err == nil && info.IsDir() {
		return os.DirFS(shared), shared, nil
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("study folder: %w", err)
	}
	return bench.EmbeddedStudy(), "the copy built into parley (bench/study)", nil
}

func labelOf(formats []bench.Format, name string) string {
	for _, f := range formats {
		if f.Name == name {
			return f.Label
		}
	}
	return name
}

// formatsText lays the results out as headed markdown tables.
func formatsText(st *bench.Study, where string, res *bench.Results, formats []bench.Format) string {
	var b strings.Builder
	names := make([]string, len(st.Messages))
	for i, m := range st.Messages {
		names[i] = m.Name
	}
	fmt.Fprintf(&b, "# Format study\n\nstudy: %s; %d messages (%s), %d facts\n", where, len(st.Messages), strings.Join(names, ", "), st.Facts())
	fmt.Fprint(&b, "Whole files are counted, final newline included; minified JSON, TOON and a2c/2 are derived\nfrom message.json and end with one newline too.\n")

	encodings := encodingOrder(res)
	baseTokens := map[string]int{}
	for _, th := range res.Threads {
		if th.Format == res.Baseline {
			baseTokens[th.Encoding] = th.Tokens
		}
	}
	for _, enc := range encodings {
		fmt.Fprintf(&b, "\n## Tokens per message, %s\n\n", enc)
		t := figure.Table{Header: []string{"format"}, Align: []figure.Align{figure.Left}}
		for _, n := range names {
			t.Header = append(t.Header, n)
		}
		t.Header = append(t.Header, "thread")
		for _, n := range names {
			t.Header = append(t.Header, n+"/fact")
		}
		t.Header = append(t.Header, "thread/fact", "vs JSON")
		for range len(t.Header) - 1 {
			t.Align = append(t.Align, figure.Right)
		}
		perFact := map[[2]string]float64{}
		for _, r := range res.Rows {
			if r.Encoding == enc {
				perFact[[2]string{r.Format, r.Message}] = r.TokensPerFact
			}
		}
		for _, th := range res.Threads {
			if th.Encoding != enc {
				continue
			}
			row := []string{labelOf(formats, th.Format)}
			for _, n := range th.Messages {
				row = append(row, strconv.Itoa(n))
			}
			row = append(row, strconv.Itoa(th.Tokens))
			for _, n := range names {
				row = append(row, fmt.Sprintf("%.2f", perFact[[2]string{th.Format, n}]))
			}
			row = append(row, fmt.Sprintf("%.2f", th.TokensPerFact), percent(th.Tokens, baseTokens[enc]))
			t.Rows = append(t.Rows, row)
		}
		b.WriteString(t.Markdown())
		b.WriteString(a2cNote(res, enc))
	}

	readers := plural(res.Readers, "reader", "readers")
	fmt.Fprintf(&b, "\n## Grammar tax and break-even, %s\n\n", readers)
	fmt.Fprintf(&b, "Every seat holds the grammar: %s and the writer (tax = grammar x %d seats). Saving is\nper message and reader, against %s; break-even is the first message count at which\nthe savings over %s have paid the tax.\n\n",
		readers, res.Readers+1, labelOf(formats, res.Baseline), readers)
	gt := figure.Table{
		Header: []string{"format", "encoding", "a reader must also hold", "grammar", "tax", "mean/message", "saving/message", "break-even"},
		Align:  []figure.Align{figure.Left, figure.Left, figure.Left, figure.Right, figure.Right, figure.Right, figure.Right, figure.Left},
	}
	for _, g := range res.Grammar {
		gt.Rows = append(gt.Rows, []string{
			labelOf(formats, g.Format), g.Encoding, g.Holds, strconv.Itoa(g.GrammarTokens), strconv.Itoa(g.TaxTokens),
			fmt.Sprintf("%.2f", g.MeanTokens), fmt.Sprintf("%.2f", g.SavingPerMessage), g.Verdict,
		})
	}
	b.WriteString(gt.Markdown())

	fmt.Fprint(&b, "\n## Construct costs\n\nEach construct counted alone.\n\n")
	ct := figure.Table{Header: []string{"kind", "construct", "what it is"}, Align: []figure.Align{figure.Left, figure.Left, figure.Left}}
	for _, enc := range encodings {
		ct.Header = append(ct.Header, enc)
		ct.Align = append(ct.Align, figure.Right)
	}
	var row []string
	for i, c := range res.Constructs {
		if i%len(encodings) == 0 {
			row = []string{c.Kind, c.Construct, c.Note}
		}
		row = append(row, strconv.Itoa(c.Tokens))
		if len(row) == 3+len(encodings) {
			ct.Rows = append(ct.Rows, row)
		}
	}
	b.WriteString(ct.Markdown())
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// encodingOrder returns the encodings in the order the results first list them.
func encodingOrder(res *bench.Results) []string {
	var out []string
	seen := map[string]bool{}
	for _, th := range res.Threads {
		if !seen[th.Encoding] {
			seen[th.Encoding] = true
			out = append(out, th.Encoding)
		}
	}
	return out
}

// percent formats n relative to base as a signed change, e.g. "-31%".
func percent(n, base int) string {
	if base == 0 {
		return "-"
	}
	d := float64(n-base) / float64(base) * 100
	if n == base {
		return "0%"
	}
	return fmt.Sprintf("%+.0f%%", d)
}

func writeFormatsSVG(path string, res *bench.Results, formats []bench.Format) error {
	c := figure.BarChart{
		Title: fmt.Sprintf("Tokens per fact by format (%d facts in the thread)", res.Threads[0].Facts),
		Unit:  "tokens per fact",
	}
	for _, th := range res.Threads {
		c.Bars = append(c.Bars, figure.Bar{Label: labelOf(formats, th.Format), Group: th.Encoding, Value: th.TokensPerFact})
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := c.WriteSVG(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// a2cNote compares a2c/2 with minified JSON under one encoding, in a line under its table:
// a codec that costs more than plain minified JSON on the study's messages must say so.
// It is empty when either format is not in the results.
func a2cNote(res *bench.Results, enc string) string {
	var a2c, min, grammar int
	found := 0
	for _, th := range res.Threads {
		if th.Encoding != enc {
			continue
		}
		switch th.Format {
		case "a2c":
			a2c = th.Tokens
			found++
		case "json-min":
			min = th.Tokens
			found++
		}
	}
	for _, g := range res.Grammar {
		if g.Encoding == enc && g.Format == "a2c" {
			grammar = g.GrammarTokens
		}
	}
	if found != 2 {
		return ""
	}
	head := fmt.Sprintf("\nNote: a2c/2 takes %d tokens for the thread, minified JSON %d (%+d)", a2c, min, a2c-min)
	switch {
	case a2c > min:
		return fmt.Sprintf("%s: on these single small JSON objects\na2c is dearer than minified JSON even before its %d-token grammar.\n", head, grammar)
	case a2c+grammar > min:
		return fmt.Sprintf("%s; with its %d-token grammar held by a reader,\na2c costs more than minified JSON on these single small JSON objects.\n", head, grammar)
	default:
		return fmt.Sprintf("%s; it is cheaper than minified JSON even with\nits %d-token grammar.\n", head, grammar)
	}
}
