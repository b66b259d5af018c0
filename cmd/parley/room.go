package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"text/tabwriter"

	"github.com/parleyhq/parley"
)

const roomDescription = `
Manage rooms on a parley server. A room is where seats talk; its name is a legible word
(team, limiter-work). Its policy decides which formats it accepts (strict: the convention or
AACP; lenient: plain text too, with warnings), the size cap per message, rate caps and the
dedup horizon.

Subcommands:
  create NAME [--policy JSON]   create a room (server admin)
  list                          list the rooms you can see
  show NAME                     print a room and its policy as JSON
  policy NAME JSON              change a room's policy; only the fields given change (admin)

These commands take the server admin's token from --token, $PARLEY_ADMIN_TOKEN or
$PARLEY_TOKEN, and the server from --url or $PARLEY_URL (default ` + defaultURL + `).`

const roomExamples = `  parley room create team
  parley room create sandbox --policy '{"format":"lenient","seat_messages_per_minute":60}'
  parley room list
  parley room policy team '{"dedup_window":"48h"}'`

func runRoom(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "room", "room create|list|show|policy [flags] [arguments]", roomDescription, roomExamples)
	cf := addClientFlags(fs)
	policy := fs.String("policy", "", "with create: the room's policy as JSON (fields left out take their defaults)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageErrorf("missing subcommand: create, list, show or policy")
	}
	sub, pos := pos[0], pos[1:]
	want := map[string]int{"create": 1, "list": 0, "show": 1, "policy": 2}
	n, ok := want[sub]
	if !ok {
		return usageErrorf("unknown subcommand %q: use create, list, show or policy", sub)
	}
	if len(pos) != n {
		return usageErrorf("room %s takes %d argument(s), got %d", sub, n, len(pos))
	}
	if *policy != "" && sub != "create" {
		return usageErrorf("--policy goes with create; to change a room's policy use 'parley room policy NAME JSON'")
	}
	c, err := cf.client(e, true)
	if err != nil {
		return err
	}

	switch sub {
	case "create":
		var p json.RawMessage
		if *policy != "" {
			if err := json.Unmarshal([]byte(*policy), &p); err != nil {
				return usageErrorf("--policy is not valid JSON: %v", err)
			}
		}
		room, err := c.CreateRoomJSON(ctx, nil, pos[0], p)
		if err != nil {
			return c.fail(err)
		}
		fmt.Fprintf(e.stdout, "created room %s\n", room.Name)
		printPolicy(e, room.Policy)
		fmt.Fprintf(e.stdout, "\nNext: add seats with 'parley seat add %s NAME [--role agent|human|runner|admin]'.\n", room.Name)
	case "list":
		rooms, err := c.Rooms(ctx, nil)
		if err != nil {
			return c.fail(err)
		}
		if len(rooms) == 0 {
			fmt.Fprintln(e.stdout, "no rooms yet: create one with 'parley room create NAME'")
			return nil
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ROOM\tFORMAT\tCREATED")
		for _, r := range rooms {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Name, r.Policy.Format, r.CreatedAt.UTC().Format(timeFormat))
		}
		return tw.Flush()
	case "show":
		room, err := c.Room(ctx, nil, pos[0])
		return printJSON(e, c, room, err)
	case "policy":
		var probe map[string]json.RawMessage
		if err := json.Unmarshal([]byte(pos[1]), &probe); err != nil {
			return usageErrorf("the policy patch is not a JSON object: %v", err)
		}
		room, err := c.UpdatePolicy(ctx, nil, pos[0], []byte(pos[1]))
		if err != nil {
			return c.fail(err)
		}
		fmt.Fprintf(e.stdout, "updated the policy of room %s\n", room.Name)
		printPolicy(e, room.Policy)
	}
	return nil
}

func printPolicy(e *env, p parley.Policy) {
	b, _ := json.Marshal(p)
	var fields map[string]any
	_ = json.Unmarshal(b, &fields)
	keys := slices.Sorted(maps.Keys(fields))
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 1, ' ', 0)
	for _, k := range keys {
		fmt.Fprintf(tw, "  %s\t%v\n", k, fields[k])
	}
	tw.Flush()
}

func printIndented(e *env, raw []byte) error {
	var b bytes.Buffer
	if err := json.Indent(&b, bytes.TrimSpace(raw), "", "  "); err != nil {
		return fmt.Errorf("the server's answer is not JSON: %w", err)
	}
	b.WriteByte('\n')
	_, err := e.stdout.Write(b.Bytes())
	return err
}
