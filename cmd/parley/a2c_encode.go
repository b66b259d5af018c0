package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"

	"github.com/parleyhq/parley/a2c"
	"github.com/parleyhq/parley/trace"
)

const a2cEncodeDescription = `
Encode sessions into a2c/2. Standard input holds session lines as normalize prints them
({"id":…,"records":[…]}) or bare record lines (one JSON object per line, taken as one
session). Standard output gets one payload per session: a header line "a2c/2 <id>" and
one line per record ("a2c/2+t <id>" when a session of prose handoffs goes as prose
lines, "plan agent: …"). Any JSON object per line round-trips, not only trace records.

--explain writes each session's decode instructions (the text a reader needs, charged in
full by benchmark) to standard error. --encoding picks the tokenizer used to keep only the
references that save tokens. --dict uses a dictionary from 'parley a2c train'; decode
needs the same file.

--json prints, instead of the payloads, one JSON object per session with exactly what a
reader receives and what each part costs: payload (the header and record lines, each
ending in a newline, as plain output writes them), instructions, dictionary (its text
when the session uses it, else ""), and payload_tokens, instruction_tokens,
dictionary_tokens and full_cost_tokens, each the --encoding count of that text alone,
so 'parley tokens' on any of the texts gives the same figure. (benchmark charges a
dictionary once for all the sessions that share it; here each session shows it whole.)`

func runA2CEncode(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "a2c encode", "a2c encode [--encoding E] [--dict FILE] [--explain] < sessions.jsonl", a2cEncodeDescription,
		"  parley a2c normalize --adapter openai --source tau.jsonl | parley a2c encode > tau.a2c\n  parley a2c encode --explain < session.jsonl\n  parley a2c encode --json < session.jsonl | jq -r .instructions | parley tokens")
	encName := fs.String("encoding", "cl100k_base", "tokenizer for token-aligned choices: cl100k_base or o200k_base")
	dictPath := fs.String("dict", "", "a dictionary file written by 'parley a2c train'")
	explain := fs.Bool("explain", false, "write each session's decode instructions to stderr")
	asJSON := fs.Bool("json", false, "print one JSON object per session: the shipped payload, instructions and dictionary texts and their token counts")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	opt, tok, err := codecOptions(*encName, *dictPath)
	if err != nil {
		return err
	}
	in, err := trace.ReadSessions(e.stdin)
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
		if *asJSON {
			b, err := json.Marshal(a2c.Ship(s.ID, out, opt.Dictionary, tok))
			if err != nil {
				return err
			}
			w.Write(b)
			w.WriteByte('\n')
		} else {
			w.WriteString(out.Payload())
		}
		if *explain {
			fmt.Fprintf(e.stderr, "%s\n%s\n\n", out.Header, out.Instructions)
		}
	}
	return w.Flush()
}
