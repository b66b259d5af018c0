package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
)

const importDescription = `
Create a room on the server from a file that 'parley export' wrote: its policy, its seats,
every message with its original seq, time, seat, tokens and notes (so its history is served
byte for byte as before), the asks with their states, the run records and the counters, all
in one transaction. The server must not have a room of that name: import creates a room, it
never merges into one. A file that is cut short, edited out of shape or not an export is
refused, naming the line, and nothing is stored.

The seats come without tokens (an export never holds one): give each seat that is to post
again a new token with 'parley seat rotate ROOM NAME'.

FILE "-" reads stdin. This takes the server admin's token ($PARLEY_ADMIN_TOKEN, else
$PARLEY_TOKEN, or --token) and the server from --url or $PARLEY_URL.`

const importExamples = `  parley import team.jsonl
  parley export team --url http://old:7070 --token "$OLD_ADMIN" | parley import - --url http://new:7070 --token "$NEW_ADMIN"
  parley seat rotate team lead          # then give each seat a token`

func runImport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "import", "import FILE [flags]", importDescription, importExamples)
	cf := addClientFlags(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErrorf("want FILE (or - for stdin), got %d argument(s)", len(pos))
	}
	cf.slowAnswer = true // the server answers once the whole room is stored
	c, err := cf.client(e, true)
	if err != nil {
		return err
	}
	var r io.Reader = e.stdin
	if pos[0] != "-" {
		f, err := os.Open(pos[0])
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	res, err := c.ImportRoom(ctx, nil, r)
	if err != nil {
		return c.fail(err)
	}
	fmt.Fprintf(e.stdout, "imported room %s: %d message(s) (last #%d), %d ask(s), %d run(s)\n",
		res.Room, res.Messages, res.LastSeq, res.Asks, res.Runs)
	if len(res.Seats) > 0 {
		fmt.Fprintf(e.stdout, "seats without a token: %s\n", strings.Join(res.Seats, ", "))
		fmt.Fprintf(e.stdout, "give each one a token with: parley seat rotate %s NAME\n", res.Room)
	}
	return nil
}
