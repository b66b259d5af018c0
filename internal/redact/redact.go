// Package redact keeps credentials out of logs. The server logs every request's path and
// query; a client that puts its token there (?token=…, ?access_token=…, a token pasted into a
// path) must not leave it in a log file that more people read than hold the token.
//
// What counts as a credential: the value of a query parameter whose name says so (token,
// access_token, auth, key, and names ending in token, secret, password or key), and any
// string of a token's shape wherever it stands: a parley seat token (pk_ and base64url, as
// `parley serve` also makes its admin tokens), the test servers' admin-… tokens, and any long
// run of base64 characters that mixes upper case, lower case and digits, as random keys do.
// A path segment or query value that holds one is replaced whole by Mark.
package redact

import (
	"log/slog"
	"net/url"
	"strings"

	"github.com/parleyhq/parley/internal/lazyre"
)

// Mark replaces what was redacted.
const Mark = "REDACTED"

// tokenShape finds strings of a credential's shape, glued to other characters or not.
var tokenShape = lazyre.New(`pk_[A-Za-z0-9_-]{16,}|admin-[A-Za-z0-9_-]{16,}|[A-Za-z0-9+/_-]{32,}=*`)

// secretNames are query parameter names whose values are credentials.
var secretNames = map[string]bool{"token": true, "access_token": true, "auth": true, "key": true,
	"api_key": true, "apikey": true, "password": true, "secret": true}

func secretName(name string) bool {
	n := strings.ToLower(name)
	if secretNames[n] {
		return true
	}
	for _, suf := range []string{"token", "secret", "password", "_key", "-key"} {
		if strings.HasSuffix(n, suf) {
			return true
		}
	}
	return false
}

// randomLooking reports whether a base64 run mixes upper case, lower case and digits, as a
// random key does and a word, a name or a hex digest does not.
func randomLooking(s string) bool {
	var up, low, digit bool
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z':
			up = true
		case c >= 'a' && c <= 'z':
			low = true
		case c >= '0' && c <= '9':
			digit = true
		}
	}
	return up && low && digit
}

// HasToken reports whether s holds a string of a token's shape.
func HasToken(s string) bool {
	if !maybeToken(s) {
		return false
	}
	for _, m := range tokenShape.FindAllString(s, -1) {
		if strings.HasPrefix(m, "pk_") || strings.HasPrefix(m, "admin-") || randomLooking(m) {
			return true
		}
	}
	return false
}

// maybeToken is false where HasToken must be: a match counts only when it starts pk_ or
// admin-, or mixes in an upper-case letter (randomLooking). Most paths (/v1/rooms/…) have
// none of these, and need not be searched with the regular expression.
func maybeToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			return true
		}
	}
	return strings.Contains(s, "pk_") || strings.Contains(s, "admin-")
}

// String replaces every string of a token's shape in s by Mark, keeping the rest.
func String(s string) string {
	if !HasToken(s) {
		return s
	}
	return tokenShape.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasPrefix(m, "pk_") || strings.HasPrefix(m, "admin-") || randomLooking(m) {
			return Mark
		}
		return m
	})
}

// value reports whether a path segment or query value (decoded) is a credential.
func value(v string) bool { return HasToken(v) || isHexRun(v) }

// isHexRun reports whether s is a long hexadecimal value (openssl rand -hex), a credential
// when it stands alone as a query value or path segment: ^[0-9a-fA-F]{32,}$, checked by hand
// because every segment of every logged path is tested (FuzzPath holds it to the expression).
func isHexRun(s string) bool {
	if len(s) < 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// Path returns the URL path p with every segment that holds a credential replaced by Mark.
func Path(p string) string {
	if !HasToken(p) && !strings.ContainsAny(p, "0123456789") {
		return p
	}
	// Most paths have nothing to redact: look first, and copy only when something is.
	clean := true
	for rest := p; clean; {
		seg, more, found := strings.Cut(rest, "/")
		clean = !credentialSegment(seg)
		if !found {
			break
		}
		rest = more
	}
	if clean {
		return p
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if credentialSegment(s) {
			segs[i] = Mark
		}
	}
	return strings.Join(segs, "/")
}

// credentialSegment reports whether a path segment, as sent or unescaped, is a credential.
func credentialSegment(s string) bool {
	if strings.IndexByte(s, '%') < 0 {
		return value(s) // as sent is as unescaped: one test, not the same twice
	}
	d, err := url.PathUnescape(s)
	if err != nil {
		d = s
	}
	return value(d) || value(s)
}

// Query returns the raw query q with the value of every parameter that is a credential, by
// its name or by its shape, replaced by Mark. The order and the other bytes stay as sent.
func Query(q string) string {
	if q == "" {
		return q
	}
	parts := strings.Split(q, "&")
	for i, part := range parts {
		k, v, hasV := strings.Cut(part, "=")
		dk, err := url.QueryUnescape(k)
		if err != nil {
			dk = k
		}
		dv, err := url.QueryUnescape(v)
		if err != nil {
			dv = v
		}
		switch {
		case value(dk) || value(k):
			parts[i] = Mark
		case hasV && (secretName(dk) || value(dv) || value(v)):
			parts[i] = k + "=" + Mark
		}
	}
	return strings.Join(parts, "&")
}

// URL returns u as a string with its path and query redacted (and any user info dropped).
func URL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.User = nil
	p := Path(c.Path)
	if p != c.Path {
		c.Path, c.RawPath = p, ""
	}
	c.RawQuery = Query(c.RawQuery)
	return c.String()
}

// ReplaceAttr returns a slog.HandlerOptions.ReplaceAttr that scrubs strings of a token's
// shape, and each of the given exact secrets, from every string and error the logger
// writes: a last line of defence for log calls that did not redact what they log.
func ReplaceAttr(secrets ...string) func(groups []string, a slog.Attr) slog.Attr {
	var exact []string
	for _, s := range secrets {
		if len(s) >= 8 {
			exact = append(exact, s)
		}
	}
	scrub := func(s string) string {
		for _, e := range exact {
			s = strings.ReplaceAll(s, e, Mark)
		}
		return String(s)
	}
	return func(_ []string, a slog.Attr) slog.Attr {
		v := a.Value.Resolve()
		switch v.Kind() {
		case slog.KindString:
			if s := v.String(); scrub(s) != s {
				a.Value = slog.StringValue(scrub(s))
			}
		case slog.KindAny:
			if err, ok := v.Any().(error); ok {
				if s := err.Error(); scrub(s) != s {
					a.Value = slog.StringValue(scrub(s))
				}
			}
		}
		return a
	}
}
