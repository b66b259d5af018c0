package main

import (
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

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/client"
)

// defaultURL is where `parley serve` listens unless told otherwise.
const defaultURL = "http://127.0.0.1:7070"

// clientFlags are the flags every client command shares.
type clientFlags struct {
	url   string
	token string
	// slowAnswer lifts the wait for the answer's headers, for a request the server works on
	// for long before it answers (an import of a large room).
	slowAnswer bool
}

func addClientFlags(fs *flag.FlagSet) *clientFlags {
	f := &clientFlags{}
	fs.StringVar(&f.url, "url", "", "server URL (default $PARLEY_URL, else "+defaultURL+")")
	fs.StringVar(&f.token, "token", "", "bearer token (default $PARLEY_TOKEN)")
	return f
}

// apiClient is the typed client of package client, configured for the CLI, with the base
// URL it was given (for the hints it prints).
type apiClient struct {
	*client.Client
	base string
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
	// No overall timeout: `parley read --follow` streams for as long as it runs. Dial and
	// header timeouts still catch a server that is down or stuck.
	hc := &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		ResponseHeaderTimeout: responseHeaderTimeout(f.slowAnswer),
		IdleConnTimeout:       90 * time.Second,
	}}
	c, err := client.New(base, token, client.WithHTTPClient(hc), client.WithUserAgent("parley/"+parleyVersion()))
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	return &apiClient{Client: c, base: strings.TrimRight(base, "/")}, nil
}

func responseHeaderTimeout(slow bool) time.Duration {
	if slow {
		return 0
	}
	return 60 * time.Second
}

// apiError is an error answer of the server, printed as its message and hint rather than as
// parley.Error prints itself.
type apiError parley.Error

func (e *apiError) Error() string {
	if e.Hint != "" {
		return e.Message + "\nhint: " + e.Hint
	}
	return e.Message
}

// fail turns an error of the client into what the CLI prints: the server's refusal as an
// *apiError, a server that cannot be reached with a hint on starting one.
func (c *apiClient) fail(err error) error {
	if err == nil {
		return nil
	}
	var pe *parley.Error
	if errors.As(err, &pe) {
		return (*apiError)(pe)
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return fmt.Errorf("cannot reach the parley server at %s: %v\nhint: start it with 'parley serve', or point PARLEY_URL (or --url) at it", c.base, op.Err)
	}
	return err
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
