package main

import "context"

const stateDescription = `
Show the state record of a topic in a room: its open asks, the decisions taken, what is done
and whether its evidence was verified, the claims still unproven, each seat's latest todos
and blocks, and the costs. A newcomer reads this instead of the whole history.`

func runState(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "state", "state ROOM TOPIC [flags]", stateDescription, "  parley state team limiter\n  parley state team limiter --json")
	cf := addClientFlags(fs)
	asJSON := fs.Bool("json", false, "print JSON instead of the convention text")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usageErrorf("want ROOM and TOPIC, got %d argument(s)", len(pos))
	}
	c, err := cf.client(e, false)
	if err != nil {
		return err
	}
	if *asJSON {
		rec, err := c.State(ctx, nil, pos[0], pos[1])
		return printJSON(e, c, rec, err)
	}
	b, err := c.StateText(ctx, nil, pos[0], pos[1])
	return printText(e, c, b, err)
}
