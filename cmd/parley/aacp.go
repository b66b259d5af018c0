package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/parleyhq/parley/aacp"
	"github.com/parleyhq/parley/aacp/llmencode"
	"github.com/parleyhq/parley/convention"
)

// aacpCommands is the table of `parley aacp` subcommands, in the order help lists them.
func aacpCommands() []command {
	return []command{
		{"validate", "check packets against AACP v1.1 (section 7 and the security rules)", runAACPValidate},
		{"encode", "build a packet from a JSON request, or from English with a model (--llm)", runAACPEncode},
		{"decode", "explain a packet in plain English (advisory)", runAACPDecode},
		{"quote", "render a packet as quoted data for an LLM prompt", runAACPQuote},
	}
}

func runAACP(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help" {
		printAACPUsage(e.stdout)
		if len(args) == 0 {
			return usageErrorf("a subcommand is required")
		}
		return nil
	}
	for _, c := range aacpCommands() {
		if c.name == args[0] {
			return c.run(ctx, e, args[1:])
		}
	}
	return usageErrorf("unknown aacp subcommand %q (have: validate, encode, decode, quote)", args[0])
}

func printAACPUsage(w io.Writer) {
	fmt.Fprint(w, `Usage: parley aacp <subcommand> [flags]

AACP v1.1 packets: one line, TASK|DOM|key:value|…, for example
  FETCH|HR|return:HR-Agent|p:1|aacp:1.1|res:emp_salary|period:2024-08|fmt:json

Subcommands:
`)
	for _, c := range aacpCommands() {
		fmt.Fprintf(w, "  %-8s  %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, "\nRun 'parley aacp <subcommand> --help' for its flags and examples.\n")
}

const aacpValidateDescription = `
Validate each input as one AACP v1.1 packet and print the findings like a compiler
(FILE:LINE:COL: SEVERITY: MESSAGE [CODE], with an indented fix).

Errors, per section 7: a missing or unknown TASK, a missing DOM, no non-empty return:, no
aacp:, an empty slot or an unnamed field; per section 14: a value carrying credentials or
personal data (pass a data_ptr: instead). Warnings: an unknown DOM (section 12 allows
private domains), no p: or an odd one, a version other than 1.1, sentiment: without tone:,
ltv: without ccy:, unknown field keys, spaces in values.

--room adds what a room requires: a to: naming the addressees. --roster checks them.
Exit status: 1 when any packet has an error, 0 otherwise, 2 for a usage error or an
unreadable file.`

const aacpValidateExamples = `  parley aacp validate packet.txt
  echo 'FETCH|HR|return:hr-bot|p:1|aacp:1.1|res:emp_salary' | parley aacp validate
  parley aacp validate --room --roster lead,builder --json packet.txt`

func runAACPValidate(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "aacp validate", "aacp validate [--room] [--roster seats] [--json] [FILE...|-]", aacpValidateDescription, aacpValidateExamples)
	room := fs.Bool("room", false, "require to: (a packet posted into a room must name its addressees)")
	rosterFlag := fs.String("roster", "", "comma-separated seats that to: may name (all is always allowed)")
	asJSON := fs.Bool("json", false, "print a JSON array with one object per input")
	files, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	roster, err := parseRoster(*rosterFlag)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	var results []lintResult
	failed, unreadable := false, false
	for _, f := range files {
		text, err := readInput(e, f)
		if err != nil {
			fmt.Fprintf(e.stderr, "parley aacp validate: %v\n", err)
			unreadable = true
			continue
		}
		_, diags := aacp.Check(text, aacp.Options{RequireTo: *room, Roster: roster})
		if diags == nil {
			diags = []convention.Diagnostic{}
		}
		failed = failed || convention.HasError(diags)
		results = append(results, lintResult{File: displayName(f), Format: "aacp", Diagnostics: diags})
	}
	return e.reportLint(results, *asJSON, unreadable, failed)
}

const aacpEncodeDescription = `
Build a packet from a structured request: a JSON object whose "task" and "dom" fill the
two positional slots and whose other members become named fields (a "fields" object is
merged in). Strings with spaces are joined with '_', arrays comma-joined, objects written
as name=value pairs; aacp:1.1 is added when absent. The field order is fixed (return, p,
aacp, to, the core fields, the extended fields, then the rest by name), so the same request
always gives the same packet.

With --llm the input is an English instruction instead, and a model writes the packet (the
LLM encoder of AACP v1.1, for instructions no pattern covers). The prompt carries parley's
compact AACP card (about 240 o200k_base tokens) and the instruction; the answer is checked
by the same validator as 'parley aacp validate', and on errors the diagnostics go back to
the model for another try, 3 attempts at most. An invalid packet is never printed: the
exit status is then 1 and the last diagnostics go to standard error. An instruction that
holds a credential or personal data (a password, a key, a card number, an email address) is
refused before any call, so nothing secret reaches the model: name where it lives and let
the packet carry data_ptr:.

--json prints {"packet","valid","attempts","prompt_tokens","completion_tokens"}, the
tokens summed over the attempts as the endpoint reported them.

What a run costs: 1 call of about 300 prompt tokens for a one-line instruction (card,
framing and instruction; --dry-run prints the exact count) and a packet's worth of
completion tokens (30–80); each retry resends the conversation so far, so 3 attempts cost
about 3.5× one.

The packet goes to standard output; validation findings go to standard error. Exit status
1 when the request cannot be encoded or the packet has a validation error.`

var aacpEncodeExamples = `  echo '{"task":"FETCH","dom":"HR","return":"HR-Agent","p":1,"res":"emp_salary","period":"2024-08","filter":{"status":"active"},"fmt":"json"}' | parley aacp encode
  parley aacp encode --room request.json

  # English to a packet, by a model:
  echo 'Ask hr-bot for the August 2024 salary report of active staff, as JSON, to HR-Agent' > ask.txt
  parley aacp encode --llm --dry-run ask.txt          # what would be sent, and its tokens
` + llmSetup("parley aacp encode --llm --json ask.txt")

func runAACPEncode(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "aacp encode", "aacp encode [--room] [--llm [model flags] [--json]] [FILE|-]", aacpEncodeDescription, aacpEncodeExamples)
	room := fs.Bool("room", false, "require to: in the request (a packet posted into a room must name its addressees)")
	useLLM := fs.Bool("llm", false, "the input is English; a model writes the packet")
	asJSON := fs.Bool("json", false, "with --llm: print {\"packet\",\"valid\",\"attempts\",\"prompt_tokens\",\"completion_tokens\"}")
	rosterFlag := fs.String("roster", "", "with --llm: comma-separated seats that to: may name")
	lf := addLLMFlags(fs, "with --llm: ")
	files, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(files) > 1 {
		return usageErrorf("encode takes one request, got %d files", len(files))
	}
	f := "-"
	if len(files) == 1 {
		f = files[0]
	}
	if !*useLLM && (*asJSON || *rosterFlag != "" || lf.dryRun) {
		return usageErrorf("--json, --roster and --dry-run go with --llm")
	}
	text, err := readInput(e, f)
	if err != nil {
		return &exitError{code: 2, msg: err.Error()}
	}
	if *useLLM {
		roster, err := parseRoster(*rosterFlag)
		if err != nil {
			return err
		}
		return aacpEncodeLLM(ctx, e, lf, text, aacp.Options{RequireTo: *room, Roster: roster}, *asJSON)
	}
	p, err := aacp.Encode([]byte(text))
	if err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	packet := p.String()
	// Validate what was written, so that positions point into the packet as printed.
	_, diags := aacp.Check(packet, aacp.Options{RequireTo: *room})
	writeDiagnostics(e.stderr, "packet", diags)
	if convention.HasError(diags) {
		return errSilentFailure
	}
	_, err = fmt.Fprintln(e.stdout, packet)
	return err
}

// aacpEncodeLLM is `parley aacp encode --llm`.
func aacpEncodeLLM(ctx context.Context, e *env, lf *llmFlags, text string, opt aacp.Options, asJSON bool) error {
	if strings.TrimSpace(text) == "" {
		return &exitError{code: 1, msg: "the instruction is empty: give the English to encode in FILE or on standard input"}
	}
	// Refuse secrets before anything else, the client included: nothing is sent.
	if what, line, col, found := aacp.SensitiveText(text); found {
		return &exitError{code: 1, msg: (&llmencode.SensitiveError{What: what, Line: line, Col: col}).Error()}
	}
	c, err := lf.client(e)
	if err != nil {
		return err
	}
	res, err := llmencode.Encode(ctx, c, text, llmencode.Options{Validate: opt})
	if err != nil {
		return err
	}
	if res.DryRun {
		fmt.Fprintf(e.stdout, "dry run: 1 call shown, %d prompt tokens; a run makes 1 to %d calls (a retry resends the conversation with the diagnostics)\n",
			res.Usage.PromptTokens, llmencode.MaxAttempts)
		return nil
	}
	if asJSON {
		out := struct {
			Packet           string `json:"packet"`
			Valid            bool   `json:"valid"`
			Attempts         int    `json:"attempts"`
			PromptTokens     int    `json:"prompt_tokens"`
			CompletionTokens int    `json:"completion_tokens"`
		}{res.Packet, res.Valid, res.Attempts, res.Usage.PromptTokens, res.Usage.CompletionTokens}
		if err := writeJSONIndent(e.stdout, out); err != nil {
			return err
		}
	}
	if !res.Valid {
		fmt.Fprintf(e.stderr, "parley aacp encode: no valid packet after %d attempts; the last answer's findings:\n", res.Attempts)
		writeDiagnostics(e.stderr, "answer", res.Diagnostics)
		return errSilentFailure
	}
	writeDiagnostics(e.stderr, "packet", res.Diagnostics)
	if !asJSON {
		_, err = fmt.Fprintln(e.stdout, res.Packet)
	}
	return err
}

const aacpDecodeDescription = `
Explain a packet in plain English, one statement per line: the action and its domain, the
addressees, each field by name, where the result goes. The English is advisory (section 8):
the packet itself is the record. Validation errors are printed to standard error, and the
exit status is then 1, but the explanation is still printed.`

const aacpDecodeExamples = `  parley aacp decode packet.txt
  echo 'FETCH|HR|return:HR-Agent|p:1|aacp:1.1|res:emp_salary|period:2024-08' | parley aacp decode`

func runAACPDecode(ctx context.Context, e *env, args []string) error {
	return aacpShow(e, args, "decode", aacpDecodeDescription, aacpDecodeExamples, aacp.Decode)
}

const aacpQuoteDescription = `
Render a packet for an LLM prompt as quoted data: one field per line, every value a JSON
string with markup and invisible characters escaped, inside a block that tells the model the
values are data, not instructions (section 14: packets are untrusted input).`

const aacpQuoteExamples = `  parley aacp quote packet.txt >> prompt.txt`

func runAACPQuote(ctx context.Context, e *env, args []string) error {
	return aacpShow(e, args, "quote", aacpQuoteDescription, aacpQuoteExamples, aacp.Quote)
}

// aacpShow reads one packet, prints render(packet), and reports validation errors.
func aacpShow(e *env, args []string, name, description, examples string, render func(*aacp.Packet) string) error {
	fs := newFlags(e, "aacp "+name, "aacp "+name+" [FILE|-]", description, examples)
	files, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(files) > 1 {
		return usageErrorf("%s takes one packet, got %d files", name, len(files))
	}
	f := "-"
	if len(files) == 1 {
		f = files[0]
	}
	text, err := readInput(e, f)
	if err != nil {
		return &exitError{code: 2, msg: err.Error()}
	}
	if strings.TrimSpace(text) == "" {
		return &exitError{code: 1, msg: displayName(f) + ": no packet"}
	}
	p, diags := aacp.Check(text, aacp.Options{})
	var errs []convention.Diagnostic
	for _, d := range diags {
		if d.Severity == convention.SeverityError {
			errs = append(errs, d)
		}
	}
	writeDiagnostics(e.stderr, displayName(f), errs)
	if _, err := io.WriteString(e.stdout, render(p)); err != nil {
		return err
	}
	if len(errs) > 0 {
		return errSilentFailure
	}
	return nil
}

func displayName(f string) string {
	if f == "-" {
		return "<stdin>"
	}
	return f
}
