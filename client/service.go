package client

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/parleyhq/parley"
)

var _ parley.RoomService = (*Client)(nil)

// maxPageLimit is the largest page the server serves (http's maxHistoryLimit); a larger
// limit is asked for as this one, which a page "of at most limit messages" allows.
const maxPageLimit = 10000

// NextAfterHeader names the header of a history page that is full: the after= of the next
// page (the same name as package http's).
const NextAfterHeader = "X-Parley-Next-After"

// callTok is call with a token rather than a caller.
func (c *Client) callTok(ctx context.Context, token, method, path string, out any) error {
	resp, err := c.send(ctx, token, Request{Method: method, Path: path, Header: http.Header{"Accept": {"application/json"}}})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("reading the server's answer: %w", err)
	}
	drain(resp.Body)
	return nil
}

// Authenticate checks token with the server and returns the caller it stands for, bound to
// the token for this client's later calls. EUNAUTHORIZED as the server says.
func (c *Client) Authenticate(ctx context.Context, token string) (*parley.Caller, error) {
	var rooms struct {
		Rooms []*parley.Room `json:"rooms"`
	}
	if err := c.callTok(ctx, token, "GET", "/v1/rooms", &rooms); err != nil {
		return nil, err
	}
	caller := &parley.Caller{Admin: true}
	// A seat sees exactly its own room; its inbox names it. The admin may see one room too,
	// but has no inbox.
	if len(rooms.Rooms) == 1 {
		room := rooms.Rooms[0].Name
		var in parley.Inbox
		err := c.callTok(ctx, token, "GET", RoomPath(room, "inbox"), &in)
		switch parley.ErrorCode(err) {
		case "":
			seat := &parley.Seat{Room: room, Name: in.Seat}
			var seats struct {
				Seats []*parley.Seat `json:"seats"`
			}
			if err := c.callTok(ctx, token, "GET", RoomPath(room, "seats"), &seats); err != nil {
				return nil, err
			}
			for _, s := range seats.Seats {
				if s.Name == in.Seat {
					seat = s
				}
			}
			caller = &parley.Caller{Seat: seat}
		case parley.EFORBIDDEN:
			// the admin, who has no seat
		default:
			return nil, err
		}
	}
	c.mu.Lock()
	c.callers[caller] = token
	c.mu.Unlock()
	return caller, nil
}

// CreateRoom creates a room (admin); a nil policy takes the defaults.
func (c *Client) CreateRoom(ctx context.Context, caller *parley.Caller, name string, p *parley.Policy) (*parley.Room, error) {
	var raw json.RawMessage
	if p != nil {
		b, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		raw = b
	}
	return c.CreateRoomJSON(ctx, caller, name, raw)
}

// CreateRoomJSON creates a room whose policy is given as JSON, fields left out taking their
// defaults; the server refuses unknown fields. An empty policy takes every default.
func (c *Client) CreateRoomJSON(ctx context.Context, caller *parley.Caller, name string, policy json.RawMessage) (*parley.Room, error) {
	req := map[string]any{"name": name}
	if len(policy) > 0 {
		req["policy"] = policy
	}
	var r parley.Room
	if _, err := c.call(ctx, caller, "POST", "/v1/rooms", req, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// UpdatePolicy merges a JSON policy patch (admin).
func (c *Client) UpdatePolicy(ctx context.Context, caller *parley.Caller, room string, patch []byte) (*parley.Room, error) {
	var r parley.Room
	if _, err := c.call(ctx, caller, "PATCH", RoomPath(room), patch, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Room returns a room.
func (c *Client) Room(ctx context.Context, caller *parley.Caller, room string) (*parley.Room, error) {
	var r parley.Room
	if _, err := c.call(ctx, caller, "GET", RoomPath(room), nil, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Rooms lists the rooms the caller sees.
func (c *Client) Rooms(ctx context.Context, caller *parley.Caller) ([]*parley.Room, error) {
	var out struct {
		Rooms []*parley.Room `json:"rooms"`
	}
	if _, err := c.call(ctx, caller, "GET", "/v1/rooms", nil, &out); err != nil {
		return nil, err
	}
	return out.Rooms, nil
}

// seatToken is the server's answer to adding a seat or rotating its token.
type seatToken struct {
	Room  string      `json:"room"`
	Name  string      `json:"name"`
	Role  parley.Role `json:"role"`
	Token string      `json:"token"`
}

// AddSeat adds a seat and returns it with its token. The seat's times are not part of the
// server's answer; Seats has them.
func (c *Client) AddSeat(ctx context.Context, caller *parley.Caller, room, name string, role parley.Role) (*parley.Seat, string, error) {
	var out seatToken
	if _, err := c.call(ctx, caller, "POST", RoomPath(room, "seats"), map[string]string{"name": name, "role": string(role)}, &out); err != nil {
		return nil, "", err
	}
	return &parley.Seat{Room: out.Room, Name: out.Name, Role: out.Role}, out.Token, nil
}

// Seats lists a room's seats, revoked ones included.
func (c *Client) Seats(ctx context.Context, caller *parley.Caller, room string) ([]*parley.Seat, error) {
	var out struct {
		Seats []*parley.Seat `json:"seats"`
	}
	if _, err := c.call(ctx, caller, "GET", RoomPath(room, "seats"), nil, &out); err != nil {
		return nil, err
	}
	return out.Seats, nil
}

// RevokeSeat revokes a seat's token for good.
func (c *Client) RevokeSeat(ctx context.Context, caller *parley.Caller, room, name string) error {
	_, err := c.call(ctx, caller, "DELETE", RoomPath(room, "seats", name), nil, nil)
	return err
}

// RotateSeat gives a seat a new token and returns it.
func (c *Client) RotateSeat(ctx context.Context, caller *parley.Caller, room, name string) (string, error) {
	var out seatToken
	if _, err := c.call(ctx, caller, "POST", RoomPath(room, "seats", name, "rotate"), nil, &out); err != nil {
		return "", err
	}
	return out.Token, nil
}

// Post posts body, exactly as given, as the caller's seat, with an Idempotency-Key when key
// is not "". A replay of the key (HTTP 200) has Replay set.
func (c *Client) Post(ctx context.Context, caller *parley.Caller, room string, body []byte, key string) (*parley.PostResult, error) {
	h := http.Header{"Accept": {"application/json"}, "Content-Type": {"text/plain; charset=utf-8"}}
	if key != "" {
		h.Set("Idempotency-Key", key)
	}
	if body == nil {
		body = []byte{}
	}
	var res parley.PostResult
	resp, err := c.callReq(ctx, Request{Method: "POST", Path: RoomPath(room, "messages"), Body: body, Header: h, Caller: caller}, &res)
	if err != nil {
		return nil, err
	}
	res.Replay = resp.StatusCode == http.StatusOK
	return &res, nil
}

// PostDraft posts a message given by its parts, as JSON; the server writes the header, with
// n= counted, and posts the text (parley.RoomService.PostDraft).
func (c *Client) PostDraft(ctx context.Context, caller *parley.Caller, room string, d *parley.Draft, key string) (*parley.PostResult, error) {
	if d == nil {
		d = &parley.Draft{}
	}
	b, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	h := http.Header{"Accept": {"application/json"}, "Content-Type": {"application/json"}}
	if key != "" {
		h.Set("Idempotency-Key", key)
	}
	var res parley.PostResult
	resp, err := c.callReq(ctx, Request{Method: "POST", Path: RoomPath(room, "messages"), Body: b, Header: h, Caller: caller}, &res)
	if err != nil {
		return nil, err
	}
	res.Replay = resp.StatusCode == http.StatusOK
	return &res, nil
}

// Search finds the room's messages holding words of query, best first (limit <= 0: the
// server's default).
func (c *Client) Search(ctx context.Context, caller *parley.Caller, room, query string, limit int) (*parley.SearchResults, error) {
	q := url.Values{"q": {query}}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out parley.SearchResults
	if _, err := c.call(ctx, caller, "GET", RoomPath(room, "search")+"?"+q.Encode(), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Page is one page of history as the server sends it.
type Page struct {
	Body []byte
	Last int64  // the last seq it holds; after, when empty
	Next int64  // the after= of the next page when this one is full; 0 at the end of the room
	ETag string // the server's ETag for the page, quotes included
}

// HistoryRange fetches one page of history: at most limit messages after `after` (limit
// <= 0: the server's page, parley.HistoryPageMessages), within parley.HistoryPageBytes.
func (c *Client) HistoryRange(ctx context.Context, caller *parley.Caller, room string, after int64, limit int) (*Page, error) {
	q := url.Values{"after": {itoa(after)}}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(min(limit, maxPageLimit)))
	}
	resp, err := c.Do(ctx, Request{Method: "GET", Path: RoomPath(room, "history") + "?" + q.Encode(), Caller: caller})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading the server's answer: %w", err)
	}
	p := &Page{Body: b, Last: after, ETag: resp.Header.Get("ETag")}
	if v := resp.Header.Get("X-Parley-Last-Seq"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			p.Last = n
		}
	}
	if n, err := strconv.ParseInt(resp.Header.Get(NextAfterHeader), 10, 64); err == nil && n > after {
		p.Next = n
	}
	return p, nil
}

// History returns one page of the history text after `after`, as the service does, and
// the last seq it holds.
func (c *Client) History(ctx context.Context, caller *parley.Caller, room string, after int64, limit int) ([]byte, int64, error) {
	p, err := c.HistoryRange(ctx, caller, room, after, limit)
	if err != nil {
		return nil, 0, err
	}
	return p.Body, p.Last, nil
}

// Messages returns one page of stored messages (GET …/messages) and the room's last seq;
// after < 0 (parley.Latest) asks for the latest page. Over HTTP a seat's read is always
// counted, as a history read is: count is the server's to decide, and NoCount is refused.
func (c *Client) Messages(ctx context.Context, caller *parley.Caller, room string, after int64, limit int, count parley.ReadCount) ([]*parley.Message, int64, error) {
	if count == parley.NoCount {
		return nil, 0, parley.Errorf(parley.EINVALID, "an uncounted read is not available over HTTP").
			WithHint("read with parley.CountRead; the server counts a seat's reads")
	}
	q := url.Values{}
	if after < 0 {
		q.Set("after", "latest")
	} else {
		q.Set("after", strconv.FormatInt(after, 10))
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out struct {
		Messages []*parley.Message `json:"messages"`
		LastSeq  int64             `json:"last_seq"`
	}
	if _, err := c.call(ctx, caller, "GET", RoomPath(room, "messages")+"?"+q.Encode(), nil, &out); err != nil {
		return nil, 0, err
	}
	for _, m := range out.Messages {
		if m.Room == "" {
			m.Room = room
		}
	}
	return out.Messages, out.LastSeq, nil
}

// HistoryAll returns the whole history after `after`, following the server's pages to the
// end of the room, and the last seq it holds.
func (c *Client) HistoryAll(ctx context.Context, caller *parley.Caller, room string, after int64) ([]byte, int64, error) {
	var all []byte
	for {
		p, err := c.HistoryRange(ctx, caller, room, after, 0)
		if err != nil {
			return nil, 0, err
		}
		all = append(all, p.Body...)
		after = p.Last
		if p.Next == 0 {
			return all, after, nil
		}
	}
}

// HistoryPage fetches the page and plans it from its bytes: Stream writes them.
func (c *Client) HistoryPage(ctx context.Context, caller *parley.Caller, room string, after int64, limit int) (*parley.HistoryPage, error) {
	p, err := c.HistoryRange(ctx, caller, room, after, limit)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(p.Body)
	body := p.Body
	return &parley.HistoryPage{
		After: after, Last: p.Last, Size: int64(len(body)), Sum: sum[:], Full: p.Next > 0,
		Stream: func(w io.Writer) error { _, err := w.Write(body); return err },
	}, nil
}

// Inbox returns the calling seat's unanswered and open asks.
func (c *Client) Inbox(ctx context.Context, caller *parley.Caller, room string) (*parley.Inbox, error) {
	var in parley.Inbox
	if _, err := c.call(ctx, caller, "GET", RoomPath(room, "inbox"), nil, &in); err != nil {
		return nil, err
	}
	return &in, nil
}

// State returns the state record of a topic.
func (c *Client) State(ctx context.Context, caller *parley.Caller, room, topic string) (*parley.StateRecord, error) {
	var rec parley.StateRecord
	if _, err := c.call(ctx, caller, "GET", RoomPath(room, "state", topic), nil, &rec); err != nil {
		return nil, err
	}
	return &rec, nil
}

// InboxText returns the inbox as the server renders it: the room convention's text.
func (c *Client) InboxText(ctx context.Context, caller *parley.Caller, room string) ([]byte, error) {
	return c.text(ctx, caller, RoomPath(room, "inbox"))
}

// StateText returns a topic's state record as the server renders it.
func (c *Client) StateText(ctx context.Context, caller *parley.Caller, room, topic string) ([]byte, error) {
	return c.text(ctx, caller, RoomPath(room, "state", topic))
}

func (c *Client) text(ctx context.Context, caller *parley.Caller, path string) ([]byte, error) {
	resp, err := c.Do(ctx, Request{Method: "GET", Path: path, Caller: caller, Header: http.Header{"Accept": {"text/plain"}}})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading the server's answer: %w", err)
	}
	return b, nil
}

// PostRun stores a test-run record; id goes in the query (for `go test -json` and JUnit
// bodies) when not "".
func (c *Client) PostRun(ctx context.Context, caller *parley.Caller, room, contentType string, body []byte, id string) (*parley.Run, error) {
	path := RoomPath(room, "runs")
	if id != "" {
		path += "?id=" + url.QueryEscape(id)
	}
	if body == nil {
		body = []byte{}
	}
	h := http.Header{"Accept": {"application/json"}}
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	var run parley.Run
	if _, err := c.callReq(ctx, Request{Method: "POST", Path: path, Body: body, Header: h, Caller: caller}, &run); err != nil {
		return nil, err
	}
	return &run, nil
}

// Stats returns the room's costs and savings.
func (c *Client) Stats(ctx context.Context, caller *parley.Caller, room string) (*parley.RoomStats, error) {
	var st parley.RoomStats
	if _, err := c.call(ctx, caller, "GET", RoomPath(room, "stats"), nil, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// Lint checks a draft as a post would, without posting it.
func (c *Client) Lint(ctx context.Context, caller *parley.Caller, room string, body []byte) ([]parley.Diagnostic, error) {
	if body == nil {
		body = []byte{}
	}
	var out struct {
		Diagnostics []parley.Diagnostic `json:"diagnostics"`
	}
	h := http.Header{"Accept": {"application/json"}, "Content-Type": {"text/plain; charset=utf-8"}}
	if _, err := c.callReq(ctx, Request{Method: "POST", Path: RoomPath(room, "lint"), Body: body, Header: h, Caller: caller}, &out); err != nil {
		return nil, err
	}
	return out.Diagnostics, nil
}

// Hold checks that the caller's token is still valid (EUNAUTHORIZED otherwise) and returns a
// context that ends with ctx. Over HTTP the server holds each long-lived request itself: an
// event stream ends as soon as its token is revoked or rotated.
func (c *Client) Hold(ctx context.Context, caller *parley.Caller) (context.Context, context.CancelFunc, error) {
	if _, err := c.Rooms(ctx, caller); err != nil {
		return nil, nil, err
	}
	hctx, cancel := context.WithCancel(ctx)
	return hctx, cancel, nil
}

// Watch sends the room's last seq after each append, read from the event stream that starts
// after the room's last seq now (from its stats). The channel closes when ctx ends or the
// stream does (the server stopped, the token was revoked); errors before the stream starts
// are returned.
func (c *Client) Watch(ctx context.Context, caller *parley.Caller, room string) (<-chan int64, error) {
	st, err := c.Stats(ctx, caller, room)
	if err != nil {
		return nil, err
	}
	ev, err := c.Events(ctx, caller, room, st.Messages)
	if err != nil {
		return nil, err
	}
	ch := make(chan int64, 1)
	go func() {
		defer close(ch)
		defer ev.Close()
		for {
			e, err := ev.Next()
			if err != nil {
				return
			}
			// Keep only the latest seq, as the service's watchers do: a slow reader wakes
			// once with the newest.
			select {
			case ch <- e.Seq:
			default:
				select {
				case <-ch:
				default:
				}
				select {
				case ch <- e.Seq:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return ch, nil
}
