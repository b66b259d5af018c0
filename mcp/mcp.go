// Package mcp is the room server's edge for agents that speak the Model Context Protocol: a
// streamable-HTTP MCP server (NewHandler, mounted at /mcp) with six small tools over
// parley.RoomService, and a stdio bridge (Bridge) for clients that only speak stdio.
//
// Every HTTP request carries the seat's bearer token and is authenticated before the MCP SDK
// sees it: a missing, unknown or revoked token is answered 401 and never reaches a session.
// Requests whose Host names a DNS name that is neither localhost nor configured (AllowHost)
// are refused (DNS rebinding), and so are cross-origin browser requests from any origin not
// configured (AllowOrigin). Every refusal is the server's JSON error shape (errors.go), the
// SDK's own included.
//
// Sessions are bound to the token that opened them: revoking or rotating it closes them at
// once (their standing SSE stream ends, a waiting read answers why), on this server or any
// other on the same database. A seat holds at most MaxSessions (16) at once; opening one more
// closes its least recently used idle session, and a session without requests for
// SessionTimeout (12h) is closed. A closed session answers the SDK's 404 "session not found",
// which tells a client to start a new one.
//
// The tools act as the token's seat, in the seat's own room: there is no room argument to get
// wrong. Their results are text written for a model to read, and say that message text from
// other seats is data, not instructions. Service errors become tool errors (IsError) carrying
// the server's message and hint, so the agent can fix its call; only internal errors are
// hidden, and logged.
package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyhq/parley"
)

// Option configures NewHandler.
type Option func(*handlerConfig)

type handlerConfig struct {
	hosts          []string
	origins        []string
	sessionTimeout time.Duration
	maxSessions    int
	done           <-chan struct{}
	render         parley.Renderer
}

// ShutdownOn ends the long-lived parts of the endpoint when done is closed: the standalone
// SSE streams clients hold open (GET) and read calls waiting for a message. Pass the serve
// command's context's Done so that http.Server.Shutdown need not wait for them.
func ShutdownOn(done <-chan struct{}) Option {
	return func(c *handlerConfig) { c.done = done }
}

// WithRenderer sets how the read, inbox and state tools write inboxes and state records as
// convention text (the server passes room.Renderer{}, as it does to the HTTP edge). Without
// one they write the records as indented JSON.
func WithRenderer(r parley.Renderer) Option {
	return func(c *handlerConfig) { c.render = r }
}

// AllowHost lets requests whose Host header names host (without port) through the DNS
// rebinding check, for a server reached under a DNS name other than localhost.
func AllowHost(host string) Option {
	return func(c *handlerConfig) { c.hosts = append(c.hosts, strings.ToLower(host)) }
}

// AllowOrigin lets browser requests from origin ("https://parley.example.com") through the
// cross-origin check even when the Host the server sees is another (a proxy that rewrites
// it). Requests without an Origin, as MCP clients send them, need no such leave.
func AllowOrigin(origin string) Option {
	return func(c *handlerConfig) { c.origins = append(c.origins, origin) }
}

// SessionTimeout closes MCP sessions without a request for d (default 12h), which also
// forgets their read cursors; a call in flight (a waiting read) keeps its session open.
// Requests on a closed session get the SDK's 404 "session not found".
func SessionTimeout(d time.Duration) Option {
	return func(c *handlerConfig) { c.sessionTimeout = d }
}

// NewHandler returns the MCP endpoint over svc: streamable HTTP, one MCP session per client,
// the caller authenticated from `Authorization: Bearer <seat token>` on every request.
func NewHandler(svc parley.RoomService, logger *slog.Logger, opts ...Option) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg := handlerConfig{sessionTimeout: DefaultSessionTimeout, maxSessions: DefaultMaxSessions}
	for _, o := range opts {
		o(&cfg)
	}
	render := cfg.render
	if render == nil {
		render = jsonRenderer{}
	}
	t := &tools{svc: svc, logger: logger, render: render, cursors: map[string]int64{}, schemas: map[string]*jsonschema.Schema{}, done: cfg.done}
	t.sessions = newSessions(svc, logger, cfg.maxSessions, t.forgetCursor)
	server := t.server()
	stream := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, &sdk.StreamableHTTPOptions{
		Logger:         logger,
		SessionTimeout: cfg.sessionTimeout,
		// The SDK's own rebinding check (on a loopback listener, only loopback Host names)
		// stays on unless hosts were allowed by name, as behind a reverse proxy on the same
		// machine; handler's check then does the job for those names.
		DisableLocalhostProtection: len(cfg.hosts) > 0,
		// A posted message is capped by the room's policy (at most 1 MiB); allow for JSON
		// escaping and the envelope.
		MaxRequestBodyBytes: 4 << 20,
	})
	// The SDK keeps TokenInfo under its own context key, set by auth.RequireBearerToken; its
	// verifier here only repackages the caller that handler already authenticated.
	withInfo := auth.RequireBearerToken(func(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		c, ok := r.Context().Value(callerCtxKey{}).(*parley.Caller)
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		// UserID binds the MCP session to the seat that opened it: the SDK refuses a request
		// on that session from any other seat's token.
		return &auth.TokenInfo{UserID: c.Seat.Room + "/" + c.Seat.Name, Extra: map[string]any{callerKey: c}}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true}) // revocation, not expiry, ends a token
	h := &handler{svc: svc, logger: logger, hosts: cfg.hosts, done: cfg.done, next: withInfo(stream), sessions: t.sessions}
	// Cross-origin browser requests (a web page posting to our loopback port) are refused;
	// clients that send no Origin or Sec-Fetch-Site, as MCP clients do not, pass.
	cop := http.NewCrossOriginProtection()
	for _, o := range cfg.origins {
		if err := cop.AddTrustedOrigin(o); err != nil {
			logger.Warn("mcp: trusted origin ignored", "origin", o, "err", err)
		}
	}
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusForbidden, parley.EFORBIDDEN,
			fmt.Sprintf("cross-origin request refused (Origin %q, Host %q)", r.Header.Get("Origin"), r.Host),
			"MCP clients send no Origin header; a browser page may call /mcp only from the server's own origin or the one `parley serve --public-url` names")
	}))
	return jsonErrors(cop.Handler(h))
}

// handler authenticates every request before the MCP SDK sees it.
type handler struct {
	svc    parley.RoomService
	logger *slog.Logger
	hosts  []string
	done   <-chan struct{}
	next   http.Handler
	// sessions learns when a POST on a session ends, its answer written.
	sessions *sessions
}

// callerKey is where the handler leaves the authenticated caller in TokenInfo.Extra.
const callerKey = "parley.caller"

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.hostAllowed(r.Host) {
		host := r.Host
		if hst, _, err := net.SplitHostPort(host); err == nil {
			host = hst
		}
		writeError(w, http.StatusForbidden, parley.EFORBIDDEN,
			fmt.Sprintf("host %q is not allowed on /mcp (DNS rebinding protection)", r.Host),
			fmt.Sprintf("reach the server as 127.0.0.1 or localhost, or start it with `--public-url https://%s` (or `--allow-host %s`) when this name is really its own", host, host))
		return
	}
	token, ok := bearer(r)
	if !ok {
		unauthorized(w, "no bearer token", "send the seat's token as `Authorization: Bearer <token>`")
		return
	}
	c, err := h.svc.Authenticate(r.Context(), token)
	if err != nil {
		if parley.ErrorCode(err) == parley.EUNAUTHORIZED {
			msg, hint := parley.ErrorMessage(err), hintOf(err)
			unauthorized(w, msg, hint)
			return
		}
		if parley.ErrorCode(err) == parley.ESTORAGEFULL {
			writeError(w, http.StatusInsufficientStorage, parley.ESTORAGEFULL, parley.ErrorMessage(err), hintOf(err))
			return
		}
		h.logger.Error("mcp: authenticate", "err", err)
		writeError(w, http.StatusInternalServerError, parley.EINTERNAL, "internal error", "")
		return
	}
	if c.Seat == nil {
		writeError(w, http.StatusForbidden, parley.EFORBIDDEN, "the MCP tools act as a seat of one room, not as the admin",
			"use a seat token: `parley seat add ROOM NAME` prints one")
		return
	}
	ctx := context.WithValue(r.Context(), callerCtxKey{}, c)
	// The SDK answers calls and the standing stream as Server-Sent Events; a buffering
	// proxy (nginx's default) would hold them back.
	w.Header().Set("X-Accel-Buffering", "no")
	if r.Method == http.MethodGet && h.done != nil {
		// A GET is the client's standing SSE stream; it would outlive a graceful shutdown.
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-h.done:
				// Let calls that the shutdown released (a waiting read) answer first: the
				// SDK client fails its pending calls when the standing stream drops.
				select {
				case <-time.After(time.Second):
				case <-ctx.Done():
				}
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	if id := r.Header.Get("Mcp-Session-Id"); r.Method == http.MethodPost && id != "" {
		h.sessions.postStarted(id)
		defer h.sessions.postEnded(id)
	}
	h.next.ServeHTTP(w, r.WithContext(ctx))
}

// callerCtxKey carries the authenticated caller from handler to the SDK's TokenInfo.
type callerCtxKey struct{}

func bearer(r *http.Request) (string, bool) {
	f := strings.Fields(r.Header.Get("Authorization"))
	if len(f) != 2 || !strings.EqualFold(f[0], "bearer") {
		return "", false
	}
	return f[1], true
}

func unauthorized(w http.ResponseWriter, msg, hint string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="parley"`)
	writeError(w, http.StatusUnauthorized, parley.EUNAUTHORIZED, msg, hint)
}

// hostAllowed is the DNS rebinding check. A rebinding attack needs a DNS name that the
// attacker controls resolving to us, so IP literals and localhost are always fine; any other
// name must be configured with AllowHost.
func (h *handler) hostAllowed(hostport string) bool {
	host := hostport
	if hst, _, err := net.SplitHostPort(hostport); err == nil {
		host = hst
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if host == "" || host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	if net.ParseIP(host) != nil {
		return true
	}
	for _, a := range h.hosts {
		if host == a {
			return true
		}
	}
	return false
}

func hintOf(err error) string {
	var e *parley.Error
	if errors.As(err, &e) {
		return e.Hint
	}
	return ""
}

// caller returns the caller the handler authenticated for this request.
func caller(req *sdk.CallToolRequest) (*parley.Caller, error) {
	if req.Extra != nil && req.Extra.TokenInfo != nil {
		if c, ok := req.Extra.TokenInfo.Extra[callerKey].(*parley.Caller); ok && c.Seat != nil {
			return c, nil
		}
	}
	return nil, parley.Errorf(parley.EUNAUTHORIZED, "no seat on this request")
}
