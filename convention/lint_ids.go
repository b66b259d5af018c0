// Identifier rules: random-looking ids and ids that cost more tokens than a word.

package convention

import (
	"strings"
	"unicode"

	"github.com/parleyhq/parley/internal/lazyre"
)

// ids warns on random-looking ids, with their token cost. raw is the words of ln.Raw; the
// words of its text are appended to buf, which is returned for the next line.
func (l *linter) ids(ln Line, raw, buf []tok) []tok {
	if ln.Word == "ev" || ln.Text == "" {
		return buf // evidence names shas and run ids, which are what they are
	}
	words := textWordsIn(buf, ln, raw)
	for i, w := range words {
		if !idShaped(w.s) {
			continue // idCost's first tests, ahead of the label tests below
		}
		if i > 0 {
			prev := strings.ToLower(strings.Trim(words[i-1].s, ":#"))
			switch prev {
			case "commit", "sha", "run", "pr", "issue", "ticket", "branch", "tag", "image", "model", "version":
				continue
			}
		}
		msg, _, ok := l.idCost(w.s)
		if !ok || labelledAsID(words, i) || i < 3 && idLabels[strings.ToLower(strings.Trim(ln.Word, ":#*_"))] {
			// `reservation ID 8C8K4E`: another system's id, named as one, must be passed on
			// exactly; the warning is for the ids a sender or a room chooses.
			continue
		}
		l.warn(ln.Num, ln.TextCol()+w.col-1, "random-id", msg, "")
	}
	return words
}

// idLabels are words that introduce an identifier issued by another system.
var idLabels = map[string]bool{"id": true, "ids": true, "number": true, "no": true, "ref": true, "reference": true, "code": true, "user": true, "username": true, "reservation": true, "order": true, "account": true, "booking": true, "confirmation": true, "invoice": true, "customer": true, "card": true}

// labelledAsID reports whether one of the three words before words[i] labels it as an id.
func labelledAsID(words []tok, i int) bool {
	for j := max(0, i-3); j < i; j++ {
		if idLabels[strings.ToLower(strings.Trim(words[j].s, ":#*_"))] {
			return true
		}
	}
	return false
}

var (
	uuidRe = lazyre.New(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	humpRe = lazyre.New(`[A-Z]?[a-z]+|[A-Z]+(?:[A-Z][a-z]|$|[^A-Za-z])?|\d+`)
	unitRe = lazyre.New(`^\d+(?:\.\d+)?(?:[a-zA-Zµ%]{1,5})$|^(?:\d+[a-z]{1,3})+$`)
	// Product and model names carry digits by design; their cost is not the sender's choice.
	productPrefix = []string{"gpt", "claude", "gemini", "llama", "mistral", "qwen", "deepseek", "sonnet", "opus", "haiku", "o1", "o3", "o4", "o200k", "cl100k", "utf", "sha", "ipv", "http", "x86", "arm64", "amd64", "win", "macos", "ubuntu", "debian", "node", "python", "go1", "es20", "iso"}
)

// idShaped is the first tests of idCost, in one pass: w has at least 6 bytes, all of them
// ASCII letters, digits, '_' or '-', and a digit or an upper-case letter after the first.
func idShaped(w string) bool {
	if len(w) < 6 {
		return false
	}
	digitOrUpper := false
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case c >= '0' && c <= '9':
			digitOrUpper = true
		case c >= 'A' && c <= 'Z':
			digitOrUpper = digitOrUpper || i > 0
		case c >= 'a' && c <= 'z', c == '_', c == '-':
		default:
			return false
		}
	}
	return digitOrUpper
}

// idCost decides whether w is an id that costs more than it needs to: random-looking (a
// UUID, base62 or hex noise inside a name) or an id with digits that costs six tokens or
// more. A bare commit sha is exempt: no word can replace it. It returns the phrase to put in
// the warning.
func (l *linter) idCost(w string) (msg string, random, ok bool) {
	if !idShaped(w) {
		// Short, or not all ASCII letters, digits, '_' and '-' (a path, a URL, an address),
		// or a plain word, or a word-id such as rate-limit.
		return "", false, false
	}
	hasDigit := strings.ContainsAny(w, "0123456789")
	hasLetter := strings.IndexFunc(w, unicode.IsLetter) >= 0
	// Three answers that end here the same way, the cheap tests first: each of them is a
	// pure function of w, so their order changes nothing but the cost.
	if IsHexSHA(w) {
		return "", false, false // a commit name is what it is; no word can replace it
	}
	if strings.ToUpper(w) == w && strings.Contains(w, "_") {
		return "", false, false // an environment variable name: legible by convention
	}
	if isNumber(w) || len(isoBasicSpans(w)) > 0 || unitRe.MatchString(w) || extISORe.MatchString(w) || len(findDates(w)) > 0 {
		return "", false, false // numbers with units and dates have their own rules
	}
	switch {
	case uuidRe.MatchString(w):
		random = true
	default:
		for _, seg := range strings.FieldsFunc(w, func(r rune) bool { return r == '-' || r == '_' }) {
			humps := humpRe.FindAllString(seg, -1)
			if len(seg) >= 6 && len(humps) >= 4 && float64(len(seg))/float64(len(humps)) < 2.6 {
				random = true
			}
		}
	}
	if !random {
		lower := strings.ToLower(w)
		for _, p := range productPrefix {
			if strings.HasPrefix(lower, p) {
				return "", false, false // gpt-4o-mini costs what it costs; node-7f8c9d2e4b is still noise
			}
		}
	}
	cost := l.countTokens(w)
	if !random && !(hasDigit && hasLetter && cost >= 6) {
		return "", false, false
	}
	kind := "looks like a random id"
	if !random {
		kind = "is an id"
	}
	return quote(w) + " " + kind + " and costs " + plural(cost, "token") + ", where a plain word costs about 2 and says what it names", random, true
}
