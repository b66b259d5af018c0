package main

import (
	"context"
)

const inboxDescription = `
Show what your seat owes and is owed in a room: the asks addressed to you that are still
unanswered (answer with a message whose header says 're <seq>'), with their times and the
default that applies if nobody answers, and your own asks still open. The text is the room
convention, as the server hands it to agents; --json gives the same as JSON.`

func runInbox(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "inbox", "inbox ROOM [flags]", inboxDescription, "  parley inbox team\n  parley inbox team --json")
	cf := addClientFlags(fs)
	asJSON := fs.Bool("json", false, "print JSON instead of the convention text")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErrorf("want ROOM, got %d argument(s)", len(pos))
	}
	return printResource(ctx, e, cf, roomPath(pos[0], "inbox"), *asJSON)
}

// printResource prints a resource that the server renders as convention text or as JSON.
func printResource(ctx context.Context, e *env, cf *clientFlags, path string, asJSON bool) error {
	c, err := cf.client(e, false)
	if err != nil {
		return err
	}
	req := apiRequest{method: "GET", path: path, header: map[string]string{"Accept": "text/plain"}}
	if asJSON {
		req.header["Accept"] = "application/json"
	}
	b, _, err := c.text(ctx, req)
	if err != nil {
		return err
	}
	if asJSON {
		return printIndented(e, b)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		b = append(b, '\n') // a terminal prompt must not run on from the last line
	}
	_, err = e.stdout.Write(b)
	return err
}
