package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/textline"
)

const readDescription = `
Print a room's history: every message as '#<seq> <seat> <time>', its body as posted
(CRLF shown as LF), and the server's notes ('! …'), a blank line between messages. A
character that could end a line or reorder text (a lone CR, NEL, U+2028, U+2029, a bidi
control; only older messages can hold one) is printed as [U+XXXX]. Every seat gets the
same bytes for the same range, which is what lets an agent's prompt cache hit. --after N
starts after message N; --limit K stops after K messages. The server sends history in pages
(at most 1,000 messages or 4 MiB each); parley read follows them to the end.

With --follow, parley prints the history and then each new message as it is posted, until
interrupted; it reconnects by itself and resumes after the last message it printed.`

const readExamples = `  parley read team
  parley read team --after 12
  parley read team --follow`

func runRead(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "read", "read ROOM [flags]", readDescription, readExamples)
	cf := addClientFlags(fs)
	after := fs.Int64("after", 0, "start after message `N`")
	limit := fs.Int("limit", 0, "print at most `K` messages (not with --follow)")
	follow := fs.Bool("follow", false, "keep printing new messages as they are posted")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErrorf("want ROOM, got %d argument(s)", len(pos))
	}
	if *after < 0 || *limit < 0 {
		return usageErrorf("--after and --limit must not be negative")
	}
	if *follow && *limit > 0 {
		return usageErrorf("--limit and --follow do not go together")
	}
	c, err := cf.client(e, false)
	if err != nil {
		return err
	}
	room := pos[0]
	if !*follow {
		return readPages(ctx, e, c, room, *after, *limit)
	}
	return followRoom(ctx, e, c, room, *after)
}

// readPages prints the history after `after`, at most limit messages (0: all of it), one
// server page at a time: the server bounds each page and names the next one's start in the
// X-Parley-Next-After header.
func readPages(ctx context.Context, e *env, c *apiClient, room string, after int64, limit int) error {
	left := limit
	for {
		n := 0
		if limit > 0 {
			n = left
		}
		p, err := c.HistoryRange(ctx, nil, room, after, n)
		if err != nil {
			return c.fail(err)
		}
		// The lines as every edge shows them (package textline): a character a terminal
		// would take for a line end or a reordering is printed escaped, whatever the server.
		if _, err := io.WriteString(e.stdout, textline.Text(string(p.Body))); err != nil {
			return err
		}
		next := p.Next
		if next == 0 {
			return nil // the last page, or a server that does not page
		}
		if limit > 0 {
			left -= int(next - after) // seqs are gapless
			if left <= 0 {
				return nil
			}
		}
		after = next
	}
}

// followRoom prints the room's messages from the event stream, reconnecting with backoff after
// a dropped connection or a server error, until ctx ends. A refusal (bad token, another
// room) ends it at once: retrying cannot help.
func followRoom(ctx context.Context, e *env, c *apiClient, room string, cursor int64) error {
	backoff := time.Second
	for {
		n, err := followOnce(ctx, e, c, room, &cursor)
		if ctx.Err() != nil {
			return nil
		}
		var ae *apiError
		if errors.As(err, &ae) && !retryable[ae.Code] {
			return err
		}
		if n > 0 {
			backoff = time.Second
		}
		msg := "the stream ended"
		if err != nil {
			msg = strings.ReplaceAll(err.Error(), "\n", "; ")
		}
		fmt.Fprintf(e.stderr, "parley read: %s; reconnecting in %s\n", msg, backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

// retryable are the refusals a reconnect may outlive: the server's own failures (HTTP 5xx,
// including a proxy's) and a rate cap. Any other refusal ends --follow at once.
var retryable = map[string]bool{parley.EINTERNAL: true, parley.ESTORAGEFULL: true, parley.ERATELIMIT: true}

// followOnce reads one connection's events and returns how many messages it printed.
func followOnce(ctx context.Context, e *env, c *apiClient, room string, cursor *int64) (int, error) {
	ev, err := c.Events(ctx, nil, room, *cursor)
	if err != nil {
		return 0, c.fail(err)
	}
	defer ev.Close()
	n := 0
	for {
		m, err := ev.Next()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		// The event's data plus a newline is the message's history text.
		if _, err := io.WriteString(e.stdout, textline.Text(m.Text)); err != nil {
			return n, err
		}
		*cursor = m.Seq
		n++
	}
}
