package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/parleyhq/parley"
)

const seatDescription = `
Manage the seats of a room. A seat is a named participant (lead, builder, yu) with a role:
agent (posts and reads), human (the same, shown as a person), runner (also posts test-run
records) or admin (also manages the room's seats and policy). Each seat has a secret token;
the server keeps only its hash, so the token is printed once, when the seat is added or its
token rotated. Whoever holds it speaks as that seat: the server stamps every message with
the token's seat, whatever the message says.

Subcommands:
  add ROOM NAME [--role ROLE]   add a seat and print its token (default role: agent)
  list ROOM                     list the room's seats
  revoke ROOM NAME              revoke the seat's token for good (the name stays taken)
  rotate ROOM NAME              give the seat a new token; the old one stops working

These commands take the server admin's token (or an admin seat's) from --token,
$PARLEY_ADMIN_TOKEN or $PARLEY_TOKEN, and the server from --url or $PARLEY_URL.`

const seatExamples = `  parley seat add team lead
  parley seat add team yu --role human
  parley seat add team ci --role runner
  parley seat rotate team builder
  parley seat revoke team builder`

func runSeat(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "seat", "seat add|list|revoke|rotate ROOM [NAME] [flags]", seatDescription, seatExamples)
	cf := addClientFlags(fs)
	role := fs.String("role", "agent", "with add: agent, human, runner or admin")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageErrorf("missing subcommand: add, list, revoke or rotate")
	}
	sub, pos := pos[0], pos[1:]
	want := map[string]int{"add": 2, "list": 1, "revoke": 2, "rotate": 2}
	n, ok := want[sub]
	if !ok {
		return usageErrorf("unknown subcommand %q: use add, list, revoke or rotate", sub)
	}
	if len(pos) != n {
		return usageErrorf("seat %s takes %d argument(s), got %d", sub, n, len(pos))
	}
	if sub == "add" && !parley.Role(*role).Valid() {
		return usageErrorf("--role %q: use agent, human, runner or admin", *role)
	}
	c, err := cf.client(e, true)
	if err != nil {
		return err
	}
	room := pos[0]

	switch sub {
	case "add":
		seat, token, err := c.AddSeat(ctx, nil, room, pos[1], parley.Role(*role))
		if err != nil {
			return c.fail(err)
		}
		fmt.Fprintf(e.stdout, "added seat %s (%s) to room %s\n", seat.Name, seat.Role, room)
		printToken(e, c, room, token, seat.Role)
	case "rotate":
		token, err := c.RotateSeat(ctx, nil, room, pos[1])
		if err != nil {
			return c.fail(err)
		}
		fmt.Fprintf(e.stdout, "rotated the token of seat %s in room %s; the old token no longer works\n", pos[1], room)
		printToken(e, c, room, token, "")
	case "revoke":
		if err := c.RevokeSeat(ctx, nil, room, pos[1]); err != nil {
			return c.fail(err)
		}
		fmt.Fprintf(e.stdout, "revoked seat %s in room %s\n", pos[1], room)
	case "list":
		seats, err := c.Seats(ctx, nil, room)
		if err != nil {
			return c.fail(err)
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SEAT\tROLE\tSTATE")
		for _, s := range seats {
			state := "active"
			if !s.Active() {
				state = "revoked " + s.RevokedAt.UTC().Format(timeFormat)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, s.Role, state)
		}
		return tw.Flush()
	}
	return nil
}

// printToken shows a token once, with what to do with it; a runner seat ("" when the role
// is not known) is also shown how to post its test runs.
func printToken(e *env, c *apiClient, room, token string, role parley.Role) {
	fmt.Fprintf(e.stdout, "\ntoken: %s\n\n", token)
	fmt.Fprintf(e.stdout, "This token is shown once; the server keeps only its hash. Give it to the seat's\n")
	fmt.Fprintf(e.stdout, "agent (HTTP: 'Authorization: Bearer <token>'), or use it from a shell:\n\n")
	fmt.Fprintf(e.stdout, "  export PARLEY_URL=%s PARLEY_TOKEN=%s\n", c.base, token)
	fmt.Fprintf(e.stdout, "  parley post %s message.txt\n  parley read %s\n  parley inbox %s\n", room, room, room)
	if role == parley.RoleRunner {
		fmt.Fprintf(e.stdout, "\nAs a runner it posts the test runs that messages cite as evidence (ev run ci-1):\n\n")
		fmt.Fprintf(e.stdout, "  go test -json ./... | parley run post %s --id ci-1 -\n", room)
		fmt.Fprintf(e.stdout, "  parley run post %s --id ci-1 --passed 12 --failed 0\n", room)
	}
}
