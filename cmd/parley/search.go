package main

import (
	"context"
	"strings"
)

const searchDescription = `
Find the messages of a room that hold words of QUERY, best match first: those holding more
of the words, and rarer ones, rank higher. QUERY is plain words, matched whole and without
regard to case; every other character (quotes, *, -, :, parentheses) only separates words,
so nothing you type is search syntax. Several arguments are one query.

Each result shows the message's seq, seat and time as history writes them, its topic, and
the lines that hold a word of the query. Read the whole message with
'parley read ROOM --after SEQ-1 --limit 1'. A search counts as one of your seat's reads.`

const searchExamples = `  parley search team redis
  parley search team "rate limiter" --limit 5
  parley search team redis window --json`

func runSearch(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "search", "search ROOM QUERY... [flags]", searchDescription, searchExamples)
	cf := addClientFlags(fs)
	limit := fs.Int("limit", 20, "return at most `K` results, 1 to 100")
	asJSON := fs.Bool("json", false, "print the server's JSON instead of text")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		return usageErrorf("want ROOM and a QUERY, got %d argument(s)", len(pos))
	}
	if *limit < 1 || *limit > 100 {
		return usageErrorf("--limit %d: give 1 to 100", *limit)
	}
	c, err := cf.client(e, false)
	if err != nil {
		return err
	}
	res, err := c.Search(ctx, nil, pos[0], strings.Join(pos[1:], " "), *limit)
	if *asJSON || err != nil {
		return printJSON(e, c, res, err)
	}
	return printText(e, c, []byte(res.Text()), nil)
}
