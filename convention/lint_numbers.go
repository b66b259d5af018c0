// Number rules: bare numbers that do not say what they measure.

package convention

import (
	"slices"
	"strings"
	"unicode"
)

var (
	httpStatus = map[string]bool{"200": true, "201": true, "202": true, "204": true, "301": true, "302": true, "304": true, "307": true, "308": true, "400": true, "401": true, "403": true, "404": true, "405": true, "409": true, "410": true, "413": true, "415": true, "422": true, "429": true, "500": true, "501": true, "502": true, "503": true, "504": true}
	stopwords  = map[string]bool{"a": true, "an": true, "the": true, "and": true, "or": true, "of": true, "to": true, "in": true, "on": true, "at": true, "by": true, "for": true, "with": true, "from": true, "is": true, "are": true, "was": true, "were": true, "be": true, "if": true, "then": true, "than": true, "when": true, "but": true, "as": true, "it": true, "into": true, "about": true, "around": true, "approx": true, "approximately": true, "up": true, "over": true, "under": true, "only": true, "just": true, "all": true, "still": true, "now": true, "so": true, "vs": true, "&": true, "→": true, "=": true, "-": true}
)

var ratioWords = map[string]bool{"of": true, "in": true, "/": true, "out": true, "per": true}

// bridge words sit between a label and its number: limit to 100, replicas at 3.
var bridge = map[string]bool{"to": true, "at": true, "of": true, "in": true, "by": true, "from": true, "under": true, "over": true, "than": true, "around": true, "about": true, "approx": true, "approximately": true, "is": true, "=": true, "→": true, "->": true}

// isNumber reports whether s is a number (numberShape). Most words are not numbers: anything but a
// sign, digits, commas and a dot is refused without running the expression.
func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c == ',' || c == '.' || c == '+' || c == '-') {
			return false
		}
	}
	return numberShape(s)
}

// numberShape reports whether s is a number as ^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$
// reads one: a sign, digits (or 1-3 digits then groups of ,ddd), and a dot with digits.
func numberShape(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	whole, frac, dot := strings.Cut(s, ".")
	if dot && (frac == "" || !allDigits(frac)) {
		return false
	}
	if whole == "" {
		return false
	}
	first, groups, comma := strings.Cut(whole, ",")
	if !comma {
		return allDigits(whole)
	}
	if len(first) > 3 || first == "" || !allDigits(first) {
		return false
	}
	for g := range strings.SplitSeq(groups, ",") {
		if len(g) != 3 || !allDigits(g) {
			return false
		}
	}
	return true
}

// bareNumbers warns on numbers whose role a reader cannot infer: no label before them, no
// unit after them. A key earns its tokens exactly there (150000 alone; 150000 tokens or
// budget 150000 is clear). HTTP status codes name themselves. all is the words of ln.Raw,
// unixs the Unix timestamps among them.
func (l *linter) bareNumbers(ln Line, all, unixs []tok) {
	labelled := false // whether the previous number was labelled, for lists like 8080, 8081
	for i, w := range all {
		if !isNumber(w.s) {
			labelled = false
			continue
		}
		if httpStatus[w.s] || slices.ContainsFunc(unixs, func(u tok) bool { return u.col == w.col }) {
			labelled = true
			continue
		}
		ok := false
		if i > 0 {
			prevRaw := rawTokenBefore(ln.Raw, w.col)
			prev := strings.ToLower(all[i-1].s)
			switch {
			case strings.HasSuffix(strings.TrimRight(prevRaw, "*_"), ":") || strings.HasSuffix(prevRaw, "="):
				ok = true
			case isNumber(all[i-1].s) && strings.HasSuffix(prevRaw, ","):
				ok = labelled
			case strings.HasSuffix(prevRaw, ","):
			case i == 1 && ln.Reserved && ln.Word != "deadline":
				// A modality word is not a label: `req 60` says what must happen, not what 60 is.
			case isWord(prev) && !stopwords[prev]:
				ok = true
			case bridge[prev] && i >= 2 && !strings.HasSuffix(rawTokenBefore(ln.Raw, all[i-1].col), ",") &&
				isWord(strings.ToLower(all[i-2].s)) && !stopwords[strings.ToLower(all[i-2].s)] && !(i == 2 && ln.Reserved):
				// `limit to 100`, `replicas at 3`: the word before the preposition labels it.
				ok = true
			}
		}
		if !ok && i+2 < len(all) && ratioWords[strings.ToLower(all[i+1].s)] && isNumber(all[i+2].s) {
			ok = true // 3 of 5, 1 in 10: a ratio, whose second term says what the first counts
		}
		if !ok && l.optLabels[w.s] {
			ok = true // rec 2 names option opt/2
		}
		if !ok && i+1 < len(all) {
			next := strings.ToLower(all[i+1].s)
			nextRaw := rawTokenAt(ln.Raw, all[i+1].col)
			if !strings.HasSuffix(rawTokenAt(ln.Raw, w.col), ",") && (startsWithLetter(next) || strings.HasPrefix(next, "%")) && !stopwords[next] || strings.HasPrefix(nextRaw, "%") {
				ok = true
			}
		}
		labelled = ok
		if ok {
			continue
		}
		l.warn(ln.Num, w.col, "bare-number", "the bare number "+w.s+" does not say what it measures: give it a unit ("+w.s+" tokens) or a label before it (budget "+w.s+")", "")
	}
}

// rawTokenBefore returns the whitespace-delimited token that ends before column col in raw.
func rawTokenBefore(raw string, col int) string {
	s := strings.TrimRightFunc(raw[:col-1], unicode.IsSpace)
	i := strings.LastIndexFunc(s, unicode.IsSpace)
	return s[i+1:]
}

// rawTokenAt returns the whitespace-delimited token of raw containing column col.
func rawTokenAt(raw string, col int) string {
	start := strings.LastIndexFunc(raw[:col-1], unicode.IsSpace) + 1
	end := strings.IndexFunc(raw[start:], unicode.IsSpace)
	if end < 0 {
		return raw[start:]
	}
	return raw[start : start+end]
}

func isWord(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !unicode.IsLetter(r) && r != '-' && r != '_' && r != '\'' {
			return false
		}
	}
	return true
}

func startsWithNumber(s string) bool {
	for _, r := range s {
		return unicode.IsDigit(r) || r == '~' || r == '$' || r == '+' || r == '-'
	}
	return false
}

func startsWithLetter(s string) bool {
	for _, r := range s {
		return unicode.IsLetter(r) || r == 'µ'
	}
	return false
}
