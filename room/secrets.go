package room

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/lazyre"
)

// secretRule recognises one kind of credential. When value is set, the rule's first group is
// the secret's value, and placeholders there (none, $VAR, <token>, ***) are not secrets.
type secretRule struct {
	kind  string
	re    *lazyre.Regexp
	value bool
	// needles: a match must contain one of these, in the lower-cased body. The scan runs on
	// every post, and most bodies contain none of them: a substring search is far cheaper
	// than the regexp (the scan was ~14% of a post's CPU). For (?i) rules a needle must
	// avoid 'k' and 's', which (?i) also matches as U+212A and U+017F, characters that
	// lower-casing leaves apart; TestSecretNeedles checks every rule against its regexp.
	needles []string
	// also, when set: a match must contain one of these as well.
	also []string
}

// secretRules are deliberately specific: a room full of agents talks about tokens, keys and
// passwords all the time, and a scanner that refuses "budget 150000 tokens" is switched off.
var secretRules = []secretRule{
	{kind: "a PEM private key", re: lazyre.New(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----`), needles: []string{"private key"}},
	{kind: "an AWS access key id", re: lazyre.New(`\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b`),
		needles: []string{"akia", "asia", "agpa", "aida", "aroa", "anpa"}},
	{kind: "an AWS secret access key", re: lazyre.New(`(?i)aws_?secret_?access_?key["']?\s*[:=]\s*["']?[A-Za-z0-9/+=]{40}\b`), needles: []string{"ecret"}},
	{kind: "a GitHub token", re: lazyre.New(`\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b`),
		needles: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}},
	{kind: "a Slack token", re: lazyre.New(`\bxox[abposr]-[A-Za-z0-9-]{10,}`), needles: []string{"xox"}},
	{kind: "an API key (sk-…)", re: lazyre.New(`\bsk-(?:proj-|ant-|live-|test-|svcacct-)?[A-Za-z0-9_-]{20,}`), needles: []string{"sk-"}},
	{kind: "a Stripe key", re: lazyre.New(`\b[rsp]k_(?:live|test)_[A-Za-z0-9]{16,}\b`), needles: []string{"k_live_", "k_test_"}},
	{kind: "a Google API key", re: lazyre.New(`\bAIza[0-9A-Za-z_-]{35}\b`), needles: []string{"aiza"}},
	{kind: "a JSON Web Token", re: lazyre.New(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`), needles: []string{"eyj"}},
	{kind: "a bearer token", re: lazyre.New(`(?i)\bbearer\s+([A-Za-z0-9._~+/-]{16,}=*)`), value: true, needles: []string{"bearer"}},
	{kind: "a password or key assignment", re: lazyre.New(
		`(?i)\b(?:password|passwd|pwd|passphrase|secret|secret[_-]?key|api[_-]?key|apikey|access[_-]?token|auth[_-]?token|client[_-]?secret|private[_-]?key)["']?\s*[:=]\s*["']?([^\s"'|,;]{4,})`),
		// Every keyword holds one of the needles (password and passwd: word, wd; pwd: wd;
		// passphrase: phra; the secrets: ecret; api key: api; access token: acce; auth token:
		// auth; private key: privat), and every match holds a ':' or an '='.
		value: true, needles: []string{"word", "wd", "phra", "ecret", "api", "acce", "auth", "privat"}, also: []string{":", "="}},
	{kind: "a URL with a password in it", re: lazyre.New(`\b[a-z][a-z0-9+.-]*://[^/\s:@|]+:([^/\s@|]{3,})@`), value: true, needles: []string{"://"}},
	{kind: "a parley seat token", re: tokenPattern, needles: []string{"pk_"}},
}

// mayMatch reports whether lower (the lower-cased body) contains one of the rule's needles.
func (r *secretRule) mayMatch(lower string) bool {
	return containsAny(lower, r.needles) && containsAny(lower, r.also)
}

// secretNeedles are the needles (and also) of every rule, by their first byte.
var secretNeedles = func() (x [256][]ruleNeedle) {
	if len(secretRules) > 64 {
		panic("room: more secret rules than mayMatchRules has bits")
	}
	for i := range secretRules {
		for _, n := range secretRules[i].needles {
			x[n[0]] = append(x[n[0]], ruleNeedle{rule: i, s: n})
		}
		for _, n := range secretRules[i].also {
			x[n[0]] = append(x[n[0]], ruleNeedle{rule: i, s: n, also: true})
		}
	}
	return x
}()

// secretSecond is which bytes follow each first byte in some needle: bit c&63 of
// secretSecond[b] is set for a needle that starts with b then c (bytes that share their low
// six bits share a bit), and every bit for a needle of one byte. Most bytes of a body start
// no needle, or none with the byte after them, which one look-up tells.
var secretSecond = func() (x [256]uint64) {
	for b, ns := range secretNeedles {
		for _, n := range ns {
			if len(n.s) == 1 {
				x[b] = ^uint64(0)
			} else {
				x[b] |= 1 << (n.s[1] & 63)
			}
		}
	}
	return x
}()

type ruleNeedle struct {
	rule int
	s    string
	also bool // one of the rule's also, not of its needles
}

// mayMatchRules is mayMatch of every rule at once, as a bit set (bit i for secretRules[i]),
// found in one pass over lower rather than one search per needle: the scan runs on every
// post, and the searches were most of its time.
func mayMatchRules(lower string) uint64 {
	var needles, also uint64
	for i := 0; i < len(lower); i++ {
		if i+1 < len(lower) && secretSecond[lower[i]]&(1<<(lower[i+1]&63)) == 0 {
			continue // no needle starts with this byte and the next (the last byte is looked at)
		}
		for _, n := range secretNeedles[lower[i]] {
			if len(lower)-i >= len(n.s) && (len(n.s) == 1 || lower[i+1] == n.s[1] && lower[i+2:i+len(n.s)] == n.s[2:]) {
				if n.also {
					also |= 1 << n.rule
				} else {
					needles |= 1 << n.rule
				}
			}
		}
	}
	return rulesOf(needles, also)
}

// rulesOf is the bit set of the rules whose needles and also the two bit sets found.
func rulesOf(needles, also uint64) uint64 {
	var may uint64
	for i := range secretRules {
		r := &secretRules[i]
		if (len(r.needles) == 0 || needles&(1<<i) != 0) && (len(r.also) == 0 || also&(1<<i) != 0) {
			may |= 1 << i
		}
	}
	return may
}

// mayMatchBody is mayMatchRules(strings.ToLower(body)). An ASCII body, nearly every one, is
// lowered byte by byte as it is read rather than copied lowered first; at the first byte
// outside ASCII it falls back to the lowered copy (lowering such text may change its length).
func mayMatchBody(body string) uint64 {
	var needles, also uint64
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c >= utf8.RuneSelf {
			return mayMatchRules(strings.ToLower(body))
		}
		c = asciiLower[c]
		if i+1 < len(body) && secretSecond[c]&(1<<(asciiLower[body[i+1]]&63)) == 0 {
			continue // as in mayMatchRules
		}
		for _, n := range secretNeedles[c] {
			if len(body)-i >= len(n.s) && (len(n.s) == 1 || asciiLower[body[i+1]] == n.s[1] && lowerEqual(body[i+2:i+len(n.s)], n.s[2:])) {
				if n.also {
					also |= 1 << n.rule
				} else {
					needles |= 1 << n.rule
				}
			}
		}
	}
	return rulesOf(needles, also)
}

// asciiLower lowers an ASCII upper-case letter and keeps every other byte.
var asciiLower = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = byte(c) + 'a' - 'A'
	}
	return t
}()

// lowerEqual reports whether s, its ASCII letters lowered, is lower.
func lowerEqual(s, lower string) bool {
	for i := 0; i < len(s); i++ {
		if asciiLower[s[i]] != lower[i] {
			return false
		}
	}
	return true
}

// containsAny reports whether s contains one of subs; true when there are none.
func containsAny(s string, subs []string) bool {
	if len(subs) == 0 {
		return true
	}
	for _, n := range subs {
		if strings.Contains(s, n) {
			return true
		}
	}
	return false
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

// scanSecrets looks for credentials and for this server's plain admin token in body.
func scanSecrets(body, adminToken string) (secretFinding, bool) {
	kind, off := firstSecret(body, adminToken)
	if off < 0 {
		return secretFinding{}, false
	}
	line, col := position(body, off)
	return secretFinding{kind: kind, line: line, col: col}, true
}

// firstSecret returns the kind and byte offset of the first secret in body, or -1.
func firstSecret(body, adminToken string) (string, int) {
	kind, bestOff := "", -1
	consider := func(k string, off int) {
		if bestOff < 0 || off < bestOff {
			bestOff, kind = off, k
		}
	}
	// A short admin token would match ordinary words; below 12 bytes it cannot be recognised
	// safely (and such a token is too weak to run a server with anyway).
	if len(adminToken) >= 12 {
		if i := strings.Index(body, adminToken); i >= 0 {
			consider("this server's admin token", i)
		}
	}
	may := mayMatchBody(body)
	for i := range secretRules {
		r := &secretRules[i]
		if may&(1<<i) == 0 {
			continue
		}
		for _, m := range r.re.FindAllStringSubmatchIndex(body, -1) {
			if r.value && m[2] >= 0 && placeholder(body[m[2]:m[3]]) {
				continue
			}
			consider(r.kind, m[0])
			break
		}
	}
	return kind, bestOff
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
