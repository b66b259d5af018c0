package client

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/parleyhq/parley"
)

var _ parley.RoomArchiver = (*Client)(nil)

// ExportRoom writes the room's export (JSON lines, server admin only) to w as the server
// streams it. A stream cut short, which lacks the end record, is an error, though what was
// written stays written.
func (c *Client) ExportRoom(ctx context.Context, caller *parley.Caller, room string, w io.Writer) error {
	resp, err := c.Do(ctx, Request{Method: "GET", Path: RoomPath(room, "export"), Caller: caller,
		Header: http.Header{"Accept": {"application/x-ndjson"}}})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	t := &tail{}
	if _, err := io.Copy(io.MultiWriter(w, t), resp.Body); err != nil {
		return fmt.Errorf("export of %s cut short: %w", room, err)
	}
	if !t.ended() {
		return parley.Errorf(parley.EINTERNAL, "the export of %s was cut short: it lacks its end record", room).
			WithHint("the server's log says why; export again")
	}
	return nil
}

// tail keeps the end of what passed through, to tell whether the last line is the end record.
type tail struct{ b []byte }

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 1024 {
		t.b = append(t.b[:0], t.b[len(t.b)-512:]...)
	}
	return len(p), nil
}

func (t *tail) ended() bool {
	b := bytes.TrimSuffix(t.b, []byte("\n"))
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	return bytes.HasPrefix(b, []byte(`{"kind":"end"`))
}

// ImportRoom sends an export to the server, which creates its room (server admin only). The
// file is read whole first.
func (c *Client) ImportRoom(ctx context.Context, caller *parley.Caller, r io.Reader) (*parley.ImportResult, error) {
	body, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading the export: %w", err)
	}
	var res parley.ImportResult
	h := http.Header{"Accept": {"application/json"}, "Content-Type": {"application/x-ndjson"}}
	if _, err := c.callReq(ctx, Request{Method: "POST", Path: "/v1/rooms/import", Body: body, Header: h, Caller: caller}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}
