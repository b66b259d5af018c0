package main

import (
	"context"
	"fmt"

	"github.com/parleyhq/parley/a2c"
)

const a2cVerifyDescription = `
Round-trip every session of a source through a2c/2 with the default configuration:
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
