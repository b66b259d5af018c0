package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley/bench"
	"github.com/parleyhq/parley/bench/readers"
	"github.com/parleyhq/parley/figure"
	"github.com/parleyhq/parley/llm"
)

const benchReadersDescription = `
Run the format study's reader tests against a model. For each study message (p1
delegation request, p2 partial status report, p3 decision proposal; 13 facts each) in each
format (prose, pretty and minified JSON, TOON, the room convention, AACP, a2c/2 with its
decode instructions), a fresh reader is handed the message as its addressee and asked, in
one call, to restate every fact and to say what it must now do, by when, and whether the
question is settled. Then:

  - fidelity: a judge call (the same model, or --judge-model / --judge-endpoint) marks each
    of the answer key's facts (facts.json) present or not; the verdicts are kept;
  - action: "by" and "settled" are compared with the key exactly, "must_do" is judged.

Also the truncation case: p2/as-published.txt says n=10 over 9 fact lines, so a reader
must act on nothing (must_do judged against "nothing", by empty; settled not compared).

Blind: a reader sees its seat name, the message, and the grammar a format needs (nothing
for prose and JSON), never the answer key or the format's name. The judge sees the key and
the answer, never the message.

--trials K repeats every cell and reports the spread (min–max). --output DIR keeps every
prompt and answer (DIR/p1/convention/trial-1/…), rows.json, report.md with the tables, and
readers.svg, a chart of fidelity by format. --json prints one row per trial:
{"message","format","trial","fidelity","fidelity_max","action_ok","prompt_tokens",
"completion_tokens"} (the reader call's tokens as the endpoint reported them).

What a run costs: 22 cells × 2 calls (reader and judge) = 44 calls per trial. The reader
prompts are 9,104 o200k_base tokens in all (322 to 492 each), the judge prompts 7,868 plus
the readers' answers (about 250 tokens each): about 22,500 input and 9,000 output tokens per
trial, so --trials 3 is about 70,000 input and 27,000 output tokens.
--dry-run prints every reader prompt and the judge prompt it would lead to, with counts.`

var benchReadersExamples = `  parley bench readers --dry-run | tail -1                  # the calls and tokens of a run
` + llmSetup("parley bench readers --trials 3 --output readers-run") + `
  parley bench readers --json --judge-model gpt-4o | jq -c 'select(.action_ok == false)'`

func runBenchReaders(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "bench readers", "bench readers [--endpoint URL] [--model NAME] [--judge-model NAME] [--study DIR] [--trials K] [--output DIR] [--json] [--dry-run]",
		benchReadersDescription, benchReadersExamples)
	lf := addLLMFlags(fs, "")
	judgeModel := fs.String("judge-model", "", "the judge's model (default: the reader's)")
	judgeEndpoint := fs.String("judge-endpoint", "", "the judge's base `URL` (default: the reader's; same key)")
	studyDir := fs.String("study", "", "the study folder `DIR` (default ../shared/study when it exists, else the copy built into parley)")
	trials := fs.Int("trials", 1, "repeat each cell `K` times and report the spread")
	output := fs.String("output", "", "keep every prompt and answer, rows.json, report.md and readers.svg in `DIR`")
	asJSON := fs.Bool("json", false, "print one JSON row per trial")
	only := fs.String("formats", "", "comma-separated formats to test, a `LIST` (default all; "+TruncatedHelp()+")")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageErrorf("unexpected argument %q", rest[0])
	}
	if *trials < 1 {
		return usageErrorf("--trials must be at least 1, not %d", *trials)
	}
	studyFS, st, where, err := loadStudy(*studyDir)
	if err != nil {
		return err
	}
	cases, err := readers.Cases(st, studyFS, bench.DefaultFormats())
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if *only != "" {
		want := strings.Split(*only, ",")
		var kept []readers.Case
		for _, c := range cases {
			if slices.Contains(want, c.Format) {
				kept = append(kept, c)
			}
		}
		if len(kept) == 0 {
			return usageErrorf("--formats %q names no format (have %s)", *only, TruncatedHelp())
		}
		cases = kept
	}
	reader, err := lf.client(e)
	if err != nil {
		return err
	}
	judge := reader
	if *judgeModel != "" || *judgeEndpoint != "" {
		if judge, err = reader.With(*judgeEndpoint, *judgeModel); err != nil {
			return usageErrorf("judge: %v", err)
		}
	}
	var keep readers.Keep
	if *output != "" {
		if err := os.MkdirAll(*output, 0o755); err != nil {
			return err
		}
		keep = func(name, content string) error {
			p := filepath.Join(*output, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			return os.WriteFile(p, []byte(content), 0o644)
		}
	}
	rows, runErr := readers.Run(ctx, reader, judge, cases, *trials, keep)
	if reader.DryRun() {
		var rp, jp int
		for _, r := range rows {
			rp += r.PromptTokens
			jp += r.Judge.PromptTokens
		}
		fmt.Fprintf(e.stdout, "dry run: %d calls shown (%d cells × %s, a reader and a judge each): reader prompts %d tokens, judge prompts %d tokens before the readers' answers are added (%s)\n",
			reader.Calls(), len(cases), plural(*trials, "trial", "trials"), rp, jp, reader.Encoding().Name())
		return runErr
	}
	if len(rows) == 0 && runErr != nil {
		return runErr
	}
	report := readersReport(rows, reader, judge, where, *trials)
	if *output != "" {
		if err := writeReadersOutput(*output, rows, report); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "parley bench readers: wrote %s (report.md, readers.svg, rows.json, every prompt and answer)\n", *output)
	}
	if *asJSON {
		for _, r := range rows {
			b, _ := json.Marshal(r)
			fmt.Fprintf(e.stdout, "%s\n", b)
		}
	} else {
		fmt.Fprint(e.stdout, report)
	}
	if runErr != nil {
		return fmt.Errorf("stopped after %d rows: %w", len(rows), runErr)
	}
	return nil
}

// TruncatedHelp lists the format names --formats takes.
func TruncatedHelp() string {
	var names []string
	for _, f := range bench.DefaultFormats() {
		names = append(names, f.Name)
	}
	return strings.Join(append(names, readers.TruncatedFormat), ", ")
}

func formatLabel(name string) string {
	if name == readers.TruncatedFormat {
		return "p2 as published (n=10, 9 lines)"
	}
	return labelOf(bench.DefaultFormats(), name)
}

// readersReport lays the rows out as markdown tables.
func readersReport(rows []readers.Row, reader, judge *llm.Client, where string, trials int) string {
	var b strings.Builder
	cells := readers.Cells(rows)
	fmt.Fprintf(&b, "# Reader tests\n\nreader: %s at %s; judge: %s at %s\nstudy: %s; %s per cell; %s\n",
		reader.Model(), reader.URL(), judge.Model(), judge.URL(), where, plural(trials, "trial", "trials"), time.Now().UTC().Format("20060102T150405Z"))

	var msgs, formats []string
	for _, c := range cells {
		if !slices.Contains(msgs, c.Message) {
			msgs = append(msgs, c.Message)
		}
		if !slices.Contains(formats, c.Format) {
			formats = append(formats, c.Format)
		}
	}
	at := map[[2]string]readers.Cell{}
	for _, c := range cells {
		at[[2]string{c.Message, c.Format}] = c
	}
	table := func(title, note string, cell func(readers.Cell) string) {
		fmt.Fprintf(&b, "\n## %s\n\n%s\n\n", title, note)
		t := figure.Table{Header: []string{"format"}, Align: []figure.Align{figure.Left}}
		for _, m := range msgs {
			t.Header = append(t.Header, m)
			t.Align = append(t.Align, figure.Right)
		}
		for _, f := range formats {
			row := []string{formatLabel(f)}
			for _, m := range msgs {
				c, ok := at[[2]string{m, f}]
				if !ok {
					row = append(row, "")
					continue
				}
				row = append(row, cell(c))
			}
			t.Rows = append(t.Rows, row)
		}
		b.WriteString(t.Markdown())
	}
	table("Fidelity", "Facts the judge found restated, of the key's facts: the mean over the trials, and the spread (min–max) when there are several.", func(c readers.Cell) string {
		s := fmt.Sprintf("%s/%d", strconv.FormatFloat(c.Mean(), 'f', -1, 64), c.FidelityMax)
		if c.Trials > 1 {
			s += fmt.Sprintf(" (%d–%d)", c.FidelityMin, c.FidelityTop)
		}
		return s
	})
	table("Action", "Trials whose reader named the right must-do (judged), the exact by and the right settled, of all trials.", func(c readers.Cell) string {
		return fmt.Sprintf("%d/%d", c.ActionOK, c.Trials)
	})
	table("Reader tokens", "Mean prompt + completion tokens of a reader call, as the endpoint reported them.", func(c readers.Cell) string {
		return fmt.Sprintf("%d + %d", c.PromptTokens/c.Trials, c.Completion/c.Trials)
	})
	var problems []string
	var judgeIn, judgeOut int
	for _, r := range rows {
		judgeIn += r.Judge.PromptTokens
		judgeOut += r.Judge.CompletionTokens
		if r.Problem != "" {
			problems = append(problems, fmt.Sprintf("- %s %s trial %d: %s", r.Message, r.Format, r.Trial, r.Problem))
		}
	}
	fmt.Fprintf(&b, "\nJudge calls: %d prompt + %d completion tokens in all.\n", judgeIn, judgeOut)
	if len(problems) > 0 {
		fmt.Fprintf(&b, "\n## Answers that could not be scored (scored 0)\n\n%s\n", strings.Join(problems, "\n"))
	}
	return b.String()
}

func writeReadersOutput(dir string, rows []readers.Row, report string) error {
	rb, err := json.MarshalIndent(rows, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "rows.json"), append(rb, '\n'), 0o644); err != nil {
		return err
	}
	c := figure.BarChart{Title: "Facts restated by format (mean over trials)", Unit: "facts restated"}
	for _, cell := range readers.Cells(rows) {
		c.Bars = append(c.Bars, figure.Bar{Label: formatLabel(cell.Format), Group: cell.Message, Value: cell.Mean()})
	}
	f, err := os.Create(filepath.Join(dir, "readers.svg"))
	if err != nil {
		return err
	}
	if err := c.WriteSVG(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	report += "\n![Facts restated by format](readers.svg)\n"
	return os.WriteFile(filepath.Join(dir, "report.md"), []byte(report), 0o644)
}
