package main

import (
	"net"
	"net/url"
	"strings"

	"github.com/parleyhq/parley/internal/forwarded"
)

// repeated is a flag that may be given more than once; each value may also list several,
// comma-separated.
type repeated []string

func (r *repeated) String() string { return strings.Join(*r, ",") }

func (r *repeated) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*r = append(*r, s)
		}
	}
	return nil
}

// proxySetup is what --public-url, --allow-host and --trusted-proxy configure.
type proxySetup struct {
	publicURL *url.URL // nil when not set
	origin    string   // scheme://host[:port] of publicURL
	hosts     []string // names /mcp accepts besides localhost and IP literals
	trusted   *forwarded.Trusted
}

// parseProxySetup checks the three settings; errors are usage errors that say what a good
// value looks like.
func parseProxySetup(publicURL string, allowHosts, trustedProxies []string) (*proxySetup, error) {
	p := &proxySetup{}
	if publicURL != "" {
		u, err := url.Parse(publicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return nil, usageErrorf("--public-url %q: give the address users reach the server at, scheme and host, e.g. https://parley.example.com", publicURL)
		}
		if u.Path != "" && u.Path != "/" {
			return nil, usageErrorf("--public-url %q: the server must be at the root of its host (proxy / to it); a path prefix (%s) is not supported", publicURL, u.Path)
		}
		p.publicURL = u
		p.origin = u.Scheme + "://" + strings.ToLower(u.Host)
		p.hosts = append(p.hosts, strings.ToLower(u.Hostname()))
	}
	for _, h := range allowHosts {
		if strings.ContainsAny(h, "/@ ") {
			return nil, usageErrorf("--allow-host %q: give a host name without scheme or path, e.g. parley.internal", h)
		}
		name := h
		if hst, _, err := net.SplitHostPort(h); err == nil {
			name = hst
		}
		name = strings.ToLower(strings.TrimSuffix(name, "."))
		if name == "" || strings.ContainsAny(name, "/:@ ") {
			return nil, usageErrorf("--allow-host %q: give a host name without scheme or path, e.g. parley.internal", h)
		}
		p.hosts = append(p.hosts, name)
	}
	t, err := forwarded.Parse(trustedProxies)
	if err != nil {
		return nil, usageErrorf("--trusted-proxy: %v", err)
	}
	p.trusted = t
	return p, nil
}

// https reports whether users reach the server over HTTPS, as --public-url says.
func (p *proxySetup) https() bool { return p.publicURL != nil && p.publicURL.Scheme == "https" }
