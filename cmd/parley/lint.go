package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/parleyhq/parley/convention"
	"github.com/parleyhq/parley/diag"
	"github.com/parleyhq/parley/lint"
)

const lintDescription = `
Check messages before you post them. Each input is one message; its format is detected:

  convention  the first line is a header such as: v1 report limiter to lead n=9
  aacp        an AACP v1.1 packet such as: REPORT|IT|return:builder|p:1|aacp:1.1|to:lead|…
  json        a JSON document
  text        anything else

Errors mean the message is data and must not be acted on (a malformed header, no
addressee, n= not matching the fact lines, evidence with no done above it, an addressee
outside --roster; for AACP, what section 7 of the specification makes an error, sensitive
data, and a missing to:, which a room requires). Warnings are what costs tokens or risks a
misreading: extended ISO dates, random-looking ids, a done without evidence, an ask without
a time, a decision phrased as already taken, and so on. JSON and plain text get one warning
with what the same facts would cost as convention lines.

Output is one line per finding, like a compiler:
  FILE:LINE:COL: SEVERITY: MESSAGE [CODE]
followed by an indented "fix:" line when a rewrite or a remedy exists. --json prints one
array with an object per input: {"file", "format", "diagnostics": [{"line", "col",
"severity", "code", "message", "fix"}]}.

Reads standard input when no FILE is given or FILE is -. Exit status: 1 when any input has
an error, 0 otherwise (warnings alone pass), 2 for a usage error or an unreadable file.`

const lintExamples = `  parley lint message.txt
  parley lint --roster lead,builder,yu p1.txt p2.txt
  printf 'v1 report limiter to lead n=1\ndone#1 limiter built\n' | parley lint
  parley lint --json packet.txt`

// lintResult is one input's findings, as --json prints them.
type lintResult struct {
	File        string                  `json:"file"`
	Format      string                  `json:"format"`
	Diagnostics []convention.Diagnostic `json:"diagnostics"`
}

// MarshalJSON writes each diagnostic with its "fix" even when it is empty, as --json always
// has; the shared diag.Diagnostic leaves an empty fix out, as the HTTP API does.
func (r lintResult) MarshalJSON() ([]byte, error) {
	// The outer Fix hides the embedded one and is written after the embedded fields, where
	// the embedded fix would have been: More, between them, is zero here and left out.
	type withFix struct {
		diag.Diagnostic
		Fix string `json:"fix"`
	}
	out := struct {
		File        string    `json:"file"`
		Format      string    `json:"format"`
		Diagnostics []withFix `json:"diagnostics"`
	}{File: r.File, Format: r.Format, Diagnostics: make([]withFix, len(r.Diagnostics))}
	for i, d := range r.Diagnostics {
		out.Diagnostics[i] = withFix{Diagnostic: d, Fix: d.Fix}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // as writeJSONIndent: messages hold < and >
	err := enc.Encode(out)
	return b.Bytes(), err
}

func runLint(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "lint", "lint [--json] [--roster seats] [FILE...|-]", lintDescription, lintExamples)
	asJSON := fs.Bool("json", false, "print a JSON array with one object per input")
	rosterFlag := fs.String("roster", "", "comma-separated seats of the room: an addressee outside it is an error (all is always allowed)")
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
	results := make([]lintResult, 0, len(files))
	failed, unreadable := false, false
	for _, f := range files {
		text, err := readInput(e, f)
		if err != nil {
			// Like a compiler: say so, check the other inputs, and exit 2 at the end.
			fmt.Fprintf(e.stderr, "parley lint: %v\n", err)
			unreadable = true
			continue
		}
		r := lintOne(displayName(f), text, roster)
		failed = failed || convention.HasError(r.Diagnostics)
		results = append(results, r)
	}
	return e.reportLint(results, *asJSON, unreadable, failed)
}

// reportLint prints the results of a lint run, as JSON or as one line per diagnostic, and
// returns the exit: 2 when a file could not be read, 1 (silently: the diagnostics said why)
// when one has an error.
func (e *env) reportLint(results []lintResult, asJSON, unreadable, failed bool) error {
	if asJSON {
		if err := writeJSONIndent(e.stdout, results); err != nil {
			return err
		}
	} else {
		for _, r := range results {
			writeDiagnostics(e.stdout, r.File, r.Diagnostics)
		}
	}
	switch {
	case unreadable:
		return &exitError{code: 2}
	case failed:
		return errSilentFailure
	}
	return nil
}

// parseRoster reads --roster: nil when the flag is empty, so that addressees go unchecked.
func parseRoster(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []string
	for _, seat := range strings.Split(s, ",") {
		seat = strings.TrimSpace(seat)
		if seat == "" {
			return nil, usageErrorf("--roster %q has an empty seat name", s)
		}
		out = append(out, seat)
	}
	return out, nil
}

// lintOne detects the format of one message and checks it (package lint, which the
// format lab calls too).
func lintOne(name, text string, roster []string) lintResult {
	format, diags := lint.Message(text, roster, conventionCounter())
	return lintResult{File: name, Format: format, Diagnostics: diags}
}

// writeDiagnostics writes findings like a compiler, with each fix indented under its finding.
func writeDiagnostics(w io.Writer, file string, diags []convention.Diagnostic) {
	var b strings.Builder
	for _, d := range diags {
		fmt.Fprintf(&b, "%s:%d:%d: %s: %s [%s]\n", file, d.Line, d.Col, d.Severity, d.Message, d.Code)
		if d.Fix != "" {
			for i, line := range strings.Split(d.Fix, "\n") {
				if i == 0 {
					b.WriteString("    fix: " + line + "\n")
				} else {
					b.WriteString("         " + line + "\n")
				}
			}
		}
	}
	io.WriteString(w, b.String())
}

// writeJSONIndent prints v as indented JSON without HTML escaping (messages hold < and >).
func writeJSONIndent(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
