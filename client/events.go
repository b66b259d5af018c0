package client

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/parleyhq/parley"
)

// Event is one message of a room's event stream.
type Event struct {
	Seq  int64
	Text string // the message's history text: the event's data plus a final "\n"
}

// Events is an open event stream (GET …/events). Next returns its messages in order; Close
// ends it.
type Events struct {
	body io.ReadCloser
	br   *bufio.Reader
}

// Events opens the room's event stream after seq `after` (sent both as ?after= and as
// Last-Event-ID, as a reconnecting reader does). An error answer is the server's
// *parley.Error, before any event.
func (c *Client) Events(ctx context.Context, caller *parley.Caller, room string, after int64) (*Events, error) {
	resp, err := c.Do(ctx, Request{Method: "GET", Path: RoomPath(room, "events") + "?after=" + itoa(after), Caller: caller,
		Header: http.Header{"Accept": {"text/event-stream"}, "Last-Event-ID": {itoa(after)}}})
	if err != nil {
		return nil, err
	}
	return &Events{body: resp.Body, br: bufio.NewReader(resp.Body)}, nil
}

// Next returns the next message. At the end of the stream it returns io.EOF; comments (the
// heartbeat, the farewell of a revoked token) and events other than messages are skipped.
func (s *Events) Next() (Event, error) {
	var id, event string
	var data []string
	for {
		line, err := s.br.ReadString('\n')
		if err != nil {
			return Event{}, err
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		switch {
		case line == "":
			if data != nil && event == "message" {
				seq, err := strconv.ParseInt(id, 10, 64)
				if err != nil {
					return Event{}, fmt.Errorf("event id %q is not a seq", id)
				}
				return Event{Seq: seq, Text: strings.Join(data, "\n") + "\n"}, nil
			}
			event, data = "", nil
		case strings.HasPrefix(line, ":"):
			// a comment
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "id":
				id = value
			case "event":
				event = value
			case "data":
				data = append(data, value)
			}
		}
	}
}

// Close ends the stream.
func (s *Events) Close() error { return s.body.Close() }
