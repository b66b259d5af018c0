package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/parleyhq/parley"
)

const postDescription = `
Post a message to a room as your seat. The message is read from FILE, or from stdin when
FILE is - or left out, and sent exactly as written. The server checks it (format,
addressing, repeats, rate caps, secrets, evidence) and either stores it and prints its seq,
its tokens, the server's notes (evidence verdicts) and any lint warnings, or refuses it and
says why. A refused convention message prints its diagnostics like a compiler,
FILE:LINE:COL: message, and exits 1.

Or give the header's parts as flags and only the facts as input, one fact per line (blank
lines are skipped): --intent, --topic and --to (repeat it, or list seats with commas; all
addresses everyone), and --re N for an answer to message N. The server writes the header,
counting n= for you, and posts exactly that text: history shows it as if you had written it
whole. A refusal then names the lines of the composed message, whose line 1 is the header
and line 2 your first fact.

With --idempotency-key, a retry of the same post (after a timeout, say) returns the
original's seq and stores nothing new. The sender is always the token's seat.`

const postExamples = `  parley post team p1.txt
  printf 'v1 note limiter to all n=1\noutcome merged\n' | parley post team
  printf 'done#1 limiter merged\nev#1 commit 3f9a2c1\n' | parley post team --intent report --topic limiter --to lead
  parley post team --intent answer --topic limiter --to lead,yu --re 12 facts.txt
  parley post team report.txt --idempotency-key report-2026-09-18`

// seatList is a repeatable --to: each use adds its comma-separated seats.
type seatList []string

func (l *seatList) String() string { return strings.Join(*l, ",") }

func (l *seatList) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

// factLines splits input into one fact per line, without line ends and blank lines.
func factLines(b []byte) []string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSuffix(l, "\r")
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

func runPost(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "post", "post ROOM [FILE|-] [flags]", postDescription, postExamples)
	cf := addClientFlags(fs)
	key := fs.String("idempotency-key", "", "a key that makes retries of this post safe (same key: same message)")
	intent := fs.String("intent", "", "compose the header: what the message does (request, report, propose, decide, answer, note)")
	topic := fs.String("topic", "", "compose the header: the task's one-word topic")
	var to seatList
	fs.Var(&to, "to", "compose the header: the `SEATS` who must act, comma-separated or repeated (all: everyone)")
	re := fs.Int64("re", 0, "compose the header: the `SEQ` of the message this one answers")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return usageErrorf("want ROOM and an optional FILE, got %d argument(s)", len(pos))
	}
	file := ""
	if len(pos) == 2 {
		file = pos[1]
	}
	body, name, err := readPostInput(e, file)
	if err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	parts := *intent != "" || *topic != "" || len(to) > 0 || *re != 0
	if parts {
		var missing []string
		for _, f := range []struct {
			name string
			set  bool
		}{{"--intent", *intent != ""}, {"--topic", *topic != ""}, {"--to", len(to) > 0}} {
			if !f.set {
				missing = append(missing, f.name)
			}
		}
		if len(missing) > 0 {
			return usageErrorf("composing the header needs --intent, --topic and --to; %s missing", strings.Join(missing, " and "))
		}
	}
	c, err := cf.client(e, false)
	if err != nil {
		return err
	}
	var res *parley.PostResult
	if parts {
		d := &parley.Draft{Intent: *intent, Topic: *topic, To: to, Re: *re, Lines: factLines(body)}
		if res, err = c.PostDraft(ctx, nil, pos[0], d, *key); err != nil {
			return postError(e, name+" (composed)", c.fail(err))
		}
	} else if res, err = c.Post(ctx, nil, pos[0], body, *key); err != nil {
		return postError(e, name, c.fail(err))
	}
	if res.Replay {
		fmt.Fprintf(e.stdout, "#%d already posted with this idempotency key; nothing new stored\n", res.Seq)
	} else {
		fmt.Fprintf(e.stdout, "posted #%d (%d tokens)\n", res.Seq, res.Tokens)
	}
	for _, n := range res.Notes {
		fmt.Fprintln(e.stdout, n) // notes read as history shows them: "! ev#1 verified: …"
	}
	printPostDiagnostics(e, name, res.Warnings)
	return nil
}

// postError prints what the server refused: diagnostics like a compiler for an invalid
// message, the original's seq for a repeat, the wait for a rate cap.
func postError(e *env, name string, err error) error {
	ae, ok := err.(*apiError)
	if !ok {
		return err
	}
	if diags, _ := ae.Fields["diagnostics"].([]parley.Diagnostic); len(diags) > 0 {
		printPostDiagnostics(e, name, diags)
	}
	if secs, ok := ae.Fields["retry_after"]; ok && ae.Hint == "" {
		ae.Hint = fmt.Sprintf("retry after %vs", secs)
	}
	return &exitError{code: apiExitCode(ae.Code), msg: ae.Error()}
}

// printPostDiagnostics prints findings as FILE:LINE:COL: [severity] message (fix), to stderr,
// where editors and humans look for them.
func printPostDiagnostics(e *env, name string, diags []parley.Diagnostic) {
	for _, d := range diags {
		sev := ""
		if d.Severity != "" && d.Severity != "error" {
			sev = d.Severity + ": "
		}
		fmt.Fprintf(e.stderr, "%s:%d:%d: %s%s", name, d.Line, d.Col, sev, d.Message)
		if d.Fix != "" {
			fmt.Fprintf(e.stderr, " (fix: %s)", d.Fix)
		}
		fmt.Fprintln(e.stderr)
	}
}
