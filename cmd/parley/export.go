package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
)

const exportDescription = `
Write everything a room holds as JSON lines, one record a line: the room and its policy, its
seats (name, role, created, revoked; never a token or its hash), every message (seq, seat,
time, format, topic, intent, re, body, tokens, notes), the asks with their states (open,
answered, lapsed, closed_by, due), the test-run records and the room's counters, then an end
record that tells a whole file from a cut one. 'parley import' reads it into another server,
SQLite or PostgreSQL, which then serves the room's history byte for byte.

The export is the room as of its last message when the export begins: messages posted while
it runs are left for the next one. It goes to stdout, or to --out FILE, which must not exist.

This takes the server admin's token ($PARLEY_ADMIN_TOKEN, else $PARLEY_TOKEN, or --token)
and the server from --url or $PARLEY_URL.`

const exportExamples = `  parley export team > team.jsonl
  parley export team --out team-$(date +%F).jsonl
  parley export team --url http://old:7070 --token "$OLD_ADMIN" | parley import - --url http://new:7070 --token "$NEW_ADMIN"
  parley export team | jq -c 'select(.kind == "message") | {seq, seat, topic}'`

func runExport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "export", "export ROOM [--out FILE] [flags]", exportDescription, exportExamples)
	cf := addClientFlags(fs)
	out := fs.String("out", "", "write to FILE (created; must not exist) instead of stdout")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErrorf("want ROOM, got %d argument(s)", len(pos))
	}
	c, err := cf.client(e, true)
	if err != nil {
		return err
	}
	var w io.Writer = e.stdout
	if *out != "" {
		f, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, iofs.ErrExist) {
			return fmt.Errorf("%s exists: an export never overwrites a file; name a new one", *out)
		}
		if err != nil {
			return err
		}
		w = f
		err = c.ExportRoom(ctx, nil, pos[0], f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(*out)
			return c.fail(err)
		}
		fmt.Fprintf(e.stderr, "exported room %s to %s\n", pos[0], *out)
		return nil
	}
	return c.fail(c.ExportRoom(ctx, nil, pos[0], w))
}
