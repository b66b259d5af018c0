package room

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/parleyhq/parley"
)

// secretRule recognises one kind of credential. When value is set, the rule's first group is
// the secret's value, and placeholders there (none, $VAR, <token>, ***) are not secrets.
type secretRule struct {
	kind  string
	re    *regexp.Regexp
	value bool
}

// secretRules are deliberately specific: a room full of agents talks about tokens, keys and
// passwords all the time, and a scanner that refuses "budget 150000 tokens" is switched off.
var secretRules = []secretRule{
	{kind: "a PEM private key", re: regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----`)},
	{kind: "an AWS access key id", re: regexp.MustCompile(`\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b`)},
	{kind: "an AWS secret access key", re: regexp.MustCompile(`(?i)aws_?secret_?access_?key["']?\s*[:=]\s*["']?[A-Za-z0-9/+=]{40}\b`)},
	{kind: "a GitHub token", re: regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b`)},
	{kind: "a Slack token", re: regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`)},
	{kind: "an API key (sk-…)", re: regexp.MustCompile(`\bsk-(?:proj-|ant-|live-|test-|svcacct-)?[A-Za-z0-9_-]{20,}`)},
	{kind: "a Stripe key", re: regexp.MustCompile(`\b[rsp]k_(?:live|test)_[A-Za-z0-9]{16,}\b`)},
	{kind: "a Google API key", re: regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`)},
	{kind: "a JSON Web Token", re: regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)},
	{kind: "a bearer token", re: regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9._~+/-]{16,}=*)`), value: true},
	{kind: "a password or key assignment", re: regexp.MustCompile(
		`(?i)\b(?:password|passwd|pwd|passphrase|secret|secret[_-]?key|api[_-]?key|apikey|access[_-]?token|auth[_-]?token|client[_-]?secret|private[_-]?key)["']?\s*[:=]\s*["']?([^\s"'|,;]{4,})`), value: true},
	{kind: "a URL with a password in it", re: regexp.MustCompile(`\b[a-z][a-z0-9+.-]*://[^/\s:@|]+:([^/\s@|]{3,})@`), value: true},
	{kind: "a parley seat token", re: tokenPattern},
}

// placeholders are values that name or hide a secret rather than being one.
var placeholders = map[string]bool{
	"none": true, "null": true, "nil": true, "empty": true, "unset": true, "redacted": true,
	"hidden": true, "required": true, "optional": true, "placeholder": true, "changeme": true,
	"xxxx": true, "example": true, "true": true, "false": true,
}

func placeholder(v string) bool {
	v = strings.Trim(v, `"'`)
	if v == "" || placeholders[strings.ToLower(v)] {
		return true
	}
	switch v[0] {
	case '$', '<', '{', '*', '%', '[':
		return true // $VAR, ${VAR}, <token>, {{secret}}, ***, %s, [redacted]
	}
	return strings.Trim(v, "*xX.") == ""
}

// secretFinding is where a secret was seen; never what it was.
type secretFinding struct {
	kind      string
	line, col int
}

// scanSecrets looks for credentials and for this server's own tokens in body.
func scanSecrets(body, adminToken string) (secretFinding, bool) {
	best := secretFinding{}
	bestOff := -1
	consider := func(kind string, off int) {
		if bestOff < 0 || off < bestOff {
			bestOff = off
			best.kind = kind
		}
	}
	// A short admin token would match ordinary words; below 12 bytes it cannot be recognised
	// safely (and such a token is too weak to run a server with anyway).
	if len(adminToken) >= 12 {
		if i := strings.Index(body, adminToken); i >= 0 {
			consider("this server's admin token", i)
		}
	}
	for _, r := range secretRules {
		for _, m := range r.re.FindAllStringSubmatchIndex(body, -1) {
			if r.value && m[2] >= 0 && placeholder(body[m[2]:m[3]]) {
				continue
			}
			consider(r.kind, m[0])
			break
		}
	}
	if bestOff < 0 {
		return secretFinding{}, false
	}
	best.line, best.col = position(body, bestOff)
	return best, true
}

// secretError refuses a post that carries a secret, saying where and what kind, never the
// secret itself (the error may be logged or shown in a UI).
func secretError(f secretFinding, format string) *parley.Error {
	msg := fmt.Sprintf("line %d, column %d: this looks like %s; a room is no place for secrets: every seat reads history, and it is kept for good",
		f.line, f.col, f.kind)
	hint := "name where the secret lives (an environment variable such as $API_TOKEN, a vault path) instead of its value; if it was real, rotate it"
	if format == parley.FormatAACP {
		hint = "AACP forbids sensitive data in field values: send it as data_ptr:<reference> that resolves through an authenticated store; if it was real, rotate it"
	}
	return invalidAt(f.line, f.col, "secret", msg, hint)
}
