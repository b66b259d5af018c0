// Package client is the typed Go client of a parley server's HTTP API. Client implements
// parley.RoomService over HTTP, so code written against the service (tests, tools, the CLI)
// runs the same against a room.Service in process and against a server across the network.
// Every error the server answers is returned as the *parley.Error it sent: its code, message
// and hint, and its extra fields decoded to the types the service uses in process ("seq"
// int64, "retry_after" int, "diagnostics" []parley.Diagnostic, "more_diagnostics" int).
//
// Callers. Over HTTP the caller is the bearer token. A Client has a token of its own, used
// for a nil *parley.Caller; Authenticate(token) returns a *parley.Caller bound to that token,
// which the Client's methods then send for it (the Client remembers each caller it returned,
// and WithToken's copies share that memory). A Caller the Client did not return is refused
// (EINVALID): it names no token to send. A caller whose token was revoked or rotated since
// gets EUNAUTHORIZED from the server, where room.Service answers EFORBIDDEN.
//
// What the service interface has no route for, and what the Client does instead:
//
//   - Authenticate: the token is checked with GET /v1/rooms (EUNAUTHORIZED as the server
//     says); a seat's name comes from its inbox and its role from the room's seat list (three
//     requests for a seat). A token that sees no room, several rooms, or whose inbox is
//     refused as the admin's, is the server admin's.
//   - Hold: the server holds every long-lived request itself (an event stream ends when its
//     token is revoked or rotated), so Hold only checks that the token is still valid and
//     returns a context that ends with ctx.
//   - Watch: reads the room's last seq from its stats, then follows the event stream after
//     it, sending each new message's seq; the channel closes when ctx ends or the stream
//     does.
//   - HistoryPage: fetches the page whole; Stream writes the bytes fetched.
//
// Beyond the interface: CreateRoomJSON (a policy as raw JSON, checked by the server),
// HistoryRange (a page with its ETag and next page), HistoryAll (every page to the end),
// InboxText and StateText (the convention text), Events (the raw event stream), WithToken
// (the same server as another seat), Do (any request, for tests of the wire). Post sends its
// idempotency key as Idempotency-Key and reports a replay (HTTP 200) in PostResult.Replay.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/version"
)

// Client talks to one parley server. It is safe for concurrent use.
type Client struct {
	base      string
	token     string
	hc        *http.Client
	userAgent string

	// callers maps the callers Authenticate returned to their tokens. Shared by the copies
	// WithToken makes.
	mu      *sync.Mutex
	callers map[*parley.Caller]string
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the HTTP client (default: http.DefaultClient). The CLI gives one with
// dial and header timeouts but no overall timeout, which would cut event streams.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// DefaultUserAgent is the User-Agent a Client sends unless WithUserAgent sets another.
func DefaultUserAgent() string { return "parley-client/" + version.String() }

// WithUserAgent sets the User-Agent header of every request.
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// New returns a client of the server at baseURL (http:// or https://, no path needed)
// whose own token is token ("" for none: then every call needs a Caller from Authenticate).
func New(baseURL, token string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("server URL %q is not an http:// or https:// URL", baseURL)
	}
	c := &Client{
		base:      strings.TrimRight(baseURL, "/"),
		token:     token,
		hc:        http.DefaultClient,
		userAgent: DefaultUserAgent(),
		mu:        &sync.Mutex{},
		callers:   map[*parley.Caller]string{},
	}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// BaseURL returns the server's URL, without a trailing slash.
func (c *Client) BaseURL() string { return c.base }

// WithToken returns a client of the same server, sharing the HTTP client, whose own token
// is token.
func (c *Client) WithToken(token string) *Client {
	d := *c
	d.token = token
	return &d
}

// tokenOf returns the token to send for caller: the client's own for nil.
func (c *Client) tokenOf(caller *parley.Caller) (string, error) {
	if caller == nil {
		return c.token, nil
	}
	c.mu.Lock()
	tok, ok := c.callers[caller]
	c.mu.Unlock()
	if !ok {
		return "", parley.Errorf(parley.EINVALID, "this caller was not returned by the client's Authenticate").
			WithHint("over HTTP a caller is its token: get it from client.Authenticate(token), or pass nil for the client's own token")
	}
	return tok, nil
}

// Request is one API call, for what the typed methods do not cover.
type Request struct {
	Method string
	Path   string // from the server's root, query included, already escaped
	Body   []byte // nil: no body
	Header http.Header
	Caller *parley.Caller // whose token to send; nil: the client's own
}

// Do sends r with the caller's bearer token. A response below 400 is returned for the
// caller to read and close; any other is read, closed and returned as the server's
// *parley.Error. A transport failure is returned wrapped, so that errors.As still finds its
// *net.OpError.
func (c *Client) Do(ctx context.Context, r Request) (*http.Response, error) {
	tok, err := c.tokenOf(r.Caller)
	if err != nil {
		return nil, err
	}
	return c.send(ctx, tok, r)
}

func (c *Client) send(ctx context.Context, token string, r Request) (*http.Response, error) {
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, c.base+r.Path, body)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if c.userAgent != "" {
		req.Header.Set("User-Agent", c.userAgent)
	}
	for k, vs := range r.Header {
		req.Header[http.CanonicalHeaderKey(k)] = vs
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%s %s: %w", r.Method, c.base+r.Path, err)
	}
	if resp.StatusCode < 400 {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, DecodeError(resp)
}

// codeOfStatus names the code of an error answer that is not the server's JSON (a proxy's
// page, a load balancer's): the inverse of the server's table, with EINTERNAL for the rest.
var codeOfStatus = map[int]string{
	http.StatusBadRequest:            parley.EINVALID,
	http.StatusUnprocessableEntity:   parley.EINVALID,
	http.StatusUnauthorized:          parley.EUNAUTHORIZED,
	http.StatusForbidden:             parley.EFORBIDDEN,
	http.StatusNotFound:              parley.ENOTFOUND,
	http.StatusConflict:              parley.ECONFLICT,
	http.StatusRequestEntityTooLarge: parley.ETOOLARGE,
	http.StatusTooManyRequests:       parley.ERATELIMIT,
	http.StatusInsufficientStorage:   parley.ESTORAGEFULL,
}

// DecodeError reads an error answer (status 400 or more) into a *parley.Error. The server's
// JSON, {"error": {"code", "message", "hint"}, …fields}, gives the error as the service
// returned it. Anything else keeps the status's code and shows what the body says.
func DecodeError(resp *http.Response) *parley.Error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	var raw map[string]json.RawMessage
	var body struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Hint    string `json:"hint"`
	}
	if json.Unmarshal(b, &raw) != nil || raw["error"] == nil || json.Unmarshal(raw["error"], &body) != nil || body.Message == "" || body.Code == "" {
		msg := strings.TrimSpace(string(b))
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		}
		code, ok := codeOfStatus[resp.StatusCode]
		if !ok {
			code = parley.EINTERNAL
			if resp.StatusCode < 500 {
				code = parley.EINVALID
			}
		}
		return &parley.Error{Code: code, Message: fmt.Sprintf("server answered %s: %s", resp.Status, msg)}
	}
	e := &parley.Error{Code: body.Code, Message: body.Message, Hint: body.Hint}
	delete(raw, "error")
	for k, v := range raw {
		e.With(k, decodeField(k, v))
	}
	return e
}

// decodeField decodes one extra field of an error to the type the service gives it.
func decodeField(key string, v json.RawMessage) any {
	switch key {
	case "seq":
		var n int64
		if json.Unmarshal(v, &n) == nil {
			return n
		}
	case "retry_after", "more_diagnostics":
		var n int
		if json.Unmarshal(v, &n) == nil {
			return n
		}
		var f float64
		if json.Unmarshal(v, &f) == nil {
			return f
		}
	case "diagnostics":
		var d []parley.Diagnostic
		if json.Unmarshal(v, &d) == nil {
			return d
		}
	}
	var x any
	_ = json.Unmarshal(v, &x)
	return x
}

// call sends a request as caller, with JSON in (when in is not nil) and out.
func (c *Client) call(ctx context.Context, caller *parley.Caller, method, path string, in any, out any) (*http.Response, error) {
	r := Request{Method: method, Path: path, Caller: caller, Header: http.Header{"Accept": {"application/json"}}}
	if in != nil {
		b, ok := in.([]byte)
		if !ok {
			var err error
			if b, err = json.Marshal(in); err != nil {
				return nil, err
			}
		}
		r.Body = b
		r.Header.Set("Content-Type", "application/json")
	}
	return c.callReq(ctx, r, out)
}

func (c *Client) callReq(ctx context.Context, r Request, out any) (*http.Response, error) {
	resp, err := c.Do(ctx, r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp, nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return resp, fmt.Errorf("reading the server's answer: %w", err)
	}
	drain(resp.Body)
	return resp, nil
}

// drain reads what is left of a body (the JSON's final newline), so that the connection goes
// back to the pool instead of being closed.
func drain(body io.Reader) { _, _ = io.Copy(io.Discard, io.LimitReader(body, 64<<10)) }

// RoomPath returns /v1/rooms/<room> followed by the escaped path elements.
func RoomPath(room string, elems ...string) string {
	p := "/v1/rooms/" + url.PathEscape(room)
	for _, e := range elems {
		p += "/" + url.PathEscape(e)
	}
	return p
}

// itoa is strconv.FormatInt for the query strings.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }
