package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// defaultURL is where `parley serve` listens unless told otherwise.
const defaultURL = "http://127.0.0.1:7070"

// clientFlags are the flags every client command shares.
type clientFlags struct {
	url   string
	token string
}

func addClientFlags(fs *flag.FlagSet) *clientFlags {
	f := &clientFlags{}
	fs.StringVar(&f.url, "url", "", "server URL (default $PARLEY_URL, else "+defaultURL+")")
	fs.StringVar(&f.token, "token", "", "bearer token (default $PARLEY_TOKEN)")
	return f
}

// apiClient talks to a parley server's HTTP API.
type apiClient struct {
	base  string
	token string
	hc    *http.Client
}

// client resolves the server URL and token from the flags and the environment. Admin
// commands (room, seat) prefer $PARLEY_ADMIN_TOKEN, the token `parley serve` takes, over
// $PARLEY_TOKEN, so one shell can run the server and manage it.
func (f *clientFlags) client(e *env, admin bool) (*apiClient, error) {
	base := f.url
	if base == "" {
		base = e.getenv("PARLEY_URL")
	}
	if base == "" {
		base = defaultURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usageErrorf("server URL %q is not an http:// or https:// URL", base)
	}
	token := f.token
	if token == "" && admin {
		token = e.getenv("PARLEY_ADMIN_TOKEN")
	}
	if token == "" {
		token = e.getenv("PARLEY_TOKEN")
	}
	if token == "" {
		if admin {
			return nil, usageErrorf("no token: set PARLEY_ADMIN_TOKEN (printed by the first 'parley serve') or pass --token")
		}
		return nil, usageErrorf("no token: set PARLEY_TOKEN to your seat's token (from 'parley seat add') or pass --token")
	}
	return &apiClient{
		base:  strings.TrimRight(base, "/"),
		token: token,
		// No overall timeout: `parley read --follow` streams for as long as it runs. Dial and
		// header timeouts still catch a server that is down or stuck.
		hc: &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
			ResponseHeaderTimeout: 60 * time.Second,
			IdleConnTimeout:       90 * time.Second,
		}},
	}, nil
}

// apiError is an error response of the server, as its JSON says.
type apiError struct {
	Status  int
	Code    string
	Message string
	Hint    string
	Fields  map[string]json.RawMessage
}

func (e *apiError) Error() string {
	if e.Hint != "" {
		return e.Message + "\nhint: " + e.Hint
	}
	return e.Message
}

// apiRequest is one API call.
type apiRequest struct {
	method string
	path   string // with the query, already escaped
	body   []byte
	header map[string]string
}

// do sends r and returns the response when its status is below 400; otherwise it returns
// the server's error as an *apiError (and closes the body). The caller closes the body of a
// successful response.
func (c *apiClient) do(ctx context.Context, r apiRequest) (*http.Response, error) {
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, c.base+r.path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("User-Agent", "parley/"+parleyVersion())
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return nil, fmt.Errorf("cannot reach the parley server at %s: %v\nhint: start it with 'parley serve', or point PARLEY_URL (or --url) at it", c.base, op.Err)
		}
		return nil, fmt.Errorf("%s %s: %w", r.method, c.base+r.path, err)
	}
	if resp.StatusCode < 400 {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, decodeAPIError(resp)
}

func decodeAPIError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var raw map[string]json.RawMessage
	var body struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Hint    string `json:"hint"`
	}
	if json.Unmarshal(b, &raw) != nil || raw["error"] == nil || json.Unmarshal(raw["error"], &body) != nil || body.Message == "" {
		// Not our server's JSON (a proxy, a load balancer): show what there is.
		msg := strings.TrimSpace(string(b))
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		}
		return &apiError{Status: resp.StatusCode, Message: fmt.Sprintf("server answered %s: %s", resp.Status, msg)}
	}
	delete(raw, "error")
	return &apiError{Status: resp.StatusCode, Code: body.Code, Message: body.Message, Hint: body.Hint, Fields: raw}
}

// json calls the API and decodes a JSON response into out.
func (c *apiClient) json(ctx context.Context, r apiRequest, out any) (int, error) {
	if r.header == nil {
		r.header = map[string]string{}
	}
	r.header["Accept"] = "application/json"
	if r.body != nil {
		if _, ok := r.header["Content-Type"]; !ok {
			r.header["Content-Type"] = "application/json"
		}
	}
	resp, err := c.do(ctx, r)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if out == nil {
		return resp.StatusCode, nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return resp.StatusCode, fmt.Errorf("reading the server's answer: %w", err)
	}
	return resp.StatusCode, nil
}

// text calls the API and returns the response body as bytes.
func (c *apiClient) text(ctx context.Context, r apiRequest) ([]byte, http.Header, error) {
	resp, err := c.do(ctx, r)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the server's answer: %w", err)
	}
	return b, resp.Header, nil
}

// roomPath returns /v1/rooms/<room> followed by the escaped path elements.
func roomPath(room string, elems ...string) string {
	p := "/v1/rooms/" + url.PathEscape(room)
	for _, e := range elems {
		p += "/" + url.PathEscape(e)
	}
	return p
}

// readPostInput reads a named file, or stdin for "" and "-". It returns the name to use in
// diagnostics.
func readPostInput(e *env, name string) ([]byte, string, error) {
	if name == "" || name == "-" {
		b, err := io.ReadAll(e.stdin)
		return b, "<stdin>", err
	}
	b, err := os.ReadFile(name)
	return b, name, err
}
