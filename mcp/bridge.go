package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BridgeConfig says where the stdio bridge forwards to.
type BridgeConfig struct {
	URL   string // the parley server, e.g. http://127.0.0.1:7070 (…/mcp is added when missing)
	Token string // the seat's token
	Room  string // when set, the token's room must be this one
	// HTTPClient defaults to a client without a timeout (read may wait up to a minute).
	HTTPClient *http.Client
	Logger     *slog.Logger
}

// Bridge serves MCP on transport (stdio for `parley mcp`) and forwards every tool call to the
// server's streamable-HTTP MCP endpoint as the configured seat, until ctx ends or the client
// goes away.
//
// It proxies MCP rather than translating to the HTTP API so that the tools, their
// descriptions, the read cursor and the error texts exist in one place, the server: the
// bridge lists the server's tools at start and offers exactly those, and a server upgrade
// needs no new bridge.
func Bridge(ctx context.Context, cfg BridgeConfig, transport sdk.Transport) error {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	endpoint, err := endpointURL(cfg.URL)
	if err != nil {
		return err
	}
	if cfg.Token == "" {
		return errors.New("no token: pass --token or set PARLEY_TOKEN")
	}
	base := cfg.HTTPClient
	if base == nil {
		base = &http.Client{}
	}
	hc := *base
	bt := &bearerTransport{token: cfg.Token, next: base.Transport}
	hc.Transport = bt
	up := &upstream{endpoint: endpoint, http: &hc}

	cs, err := up.session(ctx)
	if err != nil {
		if refusal := bt.refused(); refusal != "" {
			return fmt.Errorf("the server at %s refused the token: %s", endpoint, refusal)
		}
		return fmt.Errorf("%w (is `parley serve` running there?)", err)
	}
	if err := checkRoom(ctx, cs, cfg.Room); err != nil {
		return err
	}
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("list the server's tools: %w", err)
	}
	instructions := ""
	if ir := cs.InitializeResult(); ir != nil {
		instructions = ir.Instructions
	}
	server := sdk.NewServer(&sdk.Implementation{Name: "parley", Version: Version}, &sdk.ServerOptions{
		Instructions: instructions,
		Logger:       cfg.Logger,
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}},
	})
	for _, tool := range list.Tools {
		server.AddTool(tool, up.forward(tool.Name))
	}
	defer up.close()
	return server.Run(ctx, transport)
}

// endpointURL accepts the server's base URL or its /mcp URL.
func endpointURL(raw string) (string, error) {
	if raw == "" {
		return "", errors.New("no server URL: pass --url or set PARLEY_URL")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("server URL %q must look like http://127.0.0.1:7070", raw)
	}
	if !strings.HasSuffix(u.Path, "/mcp") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/mcp"
	}
	return u.String(), nil
}

// checkRoom fails fast when the token belongs to another room than the one the user named,
// rather than letting an agent post into the wrong room.
func checkRoom(ctx context.Context, cs *sdk.ClientSession, room string) error {
	if room == "" {
		return nil
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if err != nil {
		return fmt.Errorf("whoami: %w", err)
	}
	if res.IsError {
		return fmt.Errorf("whoami: %s", textOf(res))
	}
	got, _ := res.Meta[metaRoom].(string)
	if got != room {
		seat, _ := res.Meta[metaSeat].(string)
		return fmt.Errorf("the token is seat %s of room %s, not of room %s", seat, got, room)
	}
	return nil
}

func textOf(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// upstream is the bridge's client session to the server, reopened when the server has
// forgotten it (a restart, or an idle timeout).
type upstream struct {
	endpoint string
	http     *http.Client

	mu sync.Mutex
	cs *sdk.ClientSession
}

func (u *upstream) session(ctx context.Context) (*sdk.ClientSession, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.cs != nil {
		return u.cs, nil
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "parley-mcp-bridge", Version: Version}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint:   u.endpoint,
		HTTPClient: u.http,
		// The tools are request and response; nothing needs a standing stream.
		DisableStandaloneSSE: true,
		MaxRetries:           2,
	}, nil)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", u.endpoint, err)
	}
	u.cs = cs
	return cs, nil
}

// drop forgets cs if it is still the current session.
func (u *upstream) drop(cs *sdk.ClientSession) {
	u.mu.Lock()
	if u.cs == cs {
		u.cs = nil
	}
	u.mu.Unlock()
	cs.Close()
}

func (u *upstream) close() {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.cs != nil {
		u.cs.Close()
		u.cs = nil
	}
}

func (u *upstream) forward(name string) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		params := &sdk.CallToolParams{Name: name, Arguments: req.Params.Arguments}
		for attempt := 0; ; attempt++ {
			cs, err := u.session(ctx)
			if err != nil {
				return bridgeError(err), nil
			}
			res, err := cs.CallTool(ctx, params)
			if err == nil {
				return res, nil
			}
			// The server answered 404 for the session: it never ran the call, so running it
			// again on a new session cannot post twice. Any other failure may have happened
			// after the server acted, so it is reported, not retried.
			if errors.Is(err, sdk.ErrSessionMissing) && attempt == 0 {
				u.drop(cs)
				continue
			}
			if errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, sdk.ErrSessionMissing) {
				u.drop(cs)
			}
			return bridgeError(err), nil
		}
	}
}

func bridgeError(err error) *sdk.CallToolResult {
	return &sdk.CallToolResult{
		IsError: true,
		Content: []sdk.Content{&sdk.TextContent{Text: "bridge: the parley server did not answer: " + err.Error() +
			"\nhint: check that the server runs; a post may or may not have been stored, so read before posting again (or post with a key)."}},
	}
}

// bearerTransport adds the seat's token to every request to the server, and keeps the
// server's words when it refuses the token or the request, which the SDK reduces to a status
// text.
type bearerTransport struct {
	token string
	next  http.RoundTripper

	mu      sync.Mutex
	refusal string
}

func (t *bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	if r.Header.Get("User-Agent") == "" {
		r.Header.Set("User-Agent", "parley-mcp-bridge/"+Version)
	}
	next := t.next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(r)
	if err == nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(b))
		t.mu.Lock()
		t.refusal = describeRefusal(resp.Status, b)
		t.mu.Unlock()
	}
	return resp, err
}

func (t *bearerTransport) refused() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.refusal
}
