// Package forwarded decides what a request's X-Forwarded-For and X-Forwarded-Proto headers
// are worth: they are believed only when the connection comes from a trusted reverse proxy
// (`parley serve --trusted-proxy CIDR`), and ignored, and removed, otherwise, since any
// client can send them.
//
// Two things depend on them, and both read them only through this package:
//
//   - the client's address, which the request log records (the proxy's own address is
//     logged beside it);
//   - whether the client reached us over HTTPS, which decides the session cookie's Secure
//     flag in the web UI.
//
// The server writes no absolute URL (redirects and Location headers are paths), so the
// scheme matters nowhere else; and no limit is keyed by address (rate caps are per seat and
// per room), so the client address matters nowhere else.
package forwarded

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Trusted is a set of proxy networks. The zero value (and nil) trusts nobody.
type Trusted struct {
	nets []netip.Prefix
}

// Parse reads --trusted-proxy values: CIDRs ("10.0.0.0/8", "::1/128") or single addresses
// ("127.0.0.1").
func Parse(values []string) (*Trusted, error) {
	t := &Trusted{}
	for _, v := range values {
		for _, item := range strings.Split(v, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			if p, err := netip.ParsePrefix(item); err == nil {
				t.nets = append(t.nets, p.Masked())
				continue
			}
			a, err := netip.ParseAddr(item)
			if err != nil {
				return nil, fmt.Errorf("%q is neither a CIDR (10.0.0.0/8, ::1/128) nor an IP address", item)
			}
			a = a.Unmap()
			t.nets = append(t.nets, netip.PrefixFrom(a, a.BitLen()))
		}
	}
	return t, nil
}

// Empty reports whether t trusts nobody.
func (t *Trusted) Empty() bool { return t == nil || len(t.nets) == 0 }

// String lists the trusted networks, for the start-up log.
func (t *Trusted) String() string {
	if t.Empty() {
		return ""
	}
	s := make([]string, len(t.nets))
	for i, p := range t.nets {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

// Contains reports whether addr (an IP, or host:port) is in a trusted network.
func (t *Trusted) Contains(addr string) bool {
	if t.Empty() {
		return false
	}
	a, ok := parseAddr(addr)
	if !ok {
		return false
	}
	for _, p := range t.nets {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func parseAddr(s string) (netip.Addr, bool) {
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	}
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}

// info is what Apply learnt about a request.
type info struct {
	proxy string // the trusted proxy's address (the connection's RemoteAddr); "" when direct
	https bool   // the proxy said the client used HTTPS
}

type infoKey struct{}

// Apply returns r as the rest of the server should see it. From a trusted proxy:
// RemoteAddr becomes the client's address from X-Forwarded-For (the rightmost address that
// is not itself a trusted proxy, so a client cannot pose as another by sending the header
// itself), and X-Forwarded-Proto says whether the client used HTTPS. From anyone else both
// headers are removed, so nothing later can read them by mistake.
func (t *Trusted) Apply(r *http.Request) *http.Request {
	if !t.Contains(r.RemoteAddr) {
		if r.Header.Get("X-Forwarded-For") != "" || r.Header.Get("X-Forwarded-Proto") != "" {
			r = r.Clone(r.Context())
			r.Header.Del("X-Forwarded-For")
			r.Header.Del("X-Forwarded-Proto")
		}
		return r
	}
	in := info{proxy: r.RemoteAddr}
	client := ""
	hops := splitList(r.Header.Values("X-Forwarded-For"))
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := parseAddr(hops[i])
		if !ok {
			break // a garbled hop: nothing before it can be believed
		}
		client = a.String()
		if !t.Contains(client) {
			break
		}
	}
	if protos := splitList(r.Header.Values("X-Forwarded-Proto")); len(protos) > 0 {
		in.https = strings.EqualFold(protos[len(protos)-1], "https")
	}
	r = r.WithContext(context.WithValue(r.Context(), infoKey{}, in))
	if client != "" {
		r.RemoteAddr = client
	}
	return r
}

func splitList(values []string) []string {
	var out []string
	for _, v := range values {
		for _, item := range strings.Split(v, ",") {
			if item = strings.TrimSpace(item); item != "" {
				out = append(out, item)
			}
		}
	}
	return out
}

// HTTPS reports whether the client reached the server over HTTPS: the connection is TLS, or
// a trusted proxy said so.
func HTTPS(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	in, _ := r.Context().Value(infoKey{}).(info)
	return in.https
}

// Proxy returns the address of the trusted proxy the request came through, "" when it came
// directly.
func Proxy(r *http.Request) string {
	in, _ := r.Context().Value(infoKey{}).(info)
	return in.proxy
}
