package main

import (
	"context"
	"encoding/json"
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
	c, err := cf.client(e, false)
	if err != nil {
		return err
	}
	if *asJSON {
		in, err := c.Inbox(ctx, nil, pos[0])
		return printJSON(e, c, in, err)
	}
	b, err := c.InboxText(ctx, nil, pos[0])
	return printText(e, c, b, err)
}

// printJSON prints a resource the server answered as JSON, indented, as the server's JSON
// (the client's types hold every field it sends).
func printJSON(e *env, c *apiClient, v any, err error) error {
	if err != nil {
		return c.fail(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return printIndented(e, b)
}

// printText prints a resource the server rendered as convention text.
func printText(e *env, c *apiClient, b []byte, err error) error {
	if err != nil {
		return c.fail(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		b = append(b, '\n') // a terminal prompt must not run on from the last line
	}
	_, err = e.stdout.Write(b)
	return err
}
