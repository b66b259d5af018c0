package convention

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/parleyhq/parley/internal/spell"
)

// Lint returns warnings: what costs more tokens than it needs or risks a misreading, without
// stopping the message from being acted on. Lint never changes m; where a mechanical rewrite
// exists it is in the diagnostic's Fix.
//
// The rules are written for messages as agents actually write them, not only for the study's
// fixtures: markdown bullets, "Done:" with a colon, dates in every common form, ids pasted
// from other systems, decisions phrased as facts.
func Lint(m *Message, opt Options) []Diagnostic {
	if builtLines(m) {
		// A message built in code has no Raw text; lint its canonical lines instead.
		c := *m
		c.Lines = slices.Clone(m.Lines)
		for i := range c.Lines {
			ln := &c.Lines[i]
			if ln.Raw == "" {
				ln.Raw = ln.render()
			}
			ln.Reserved = reservedSet[ln.Word]
			if ln.Num == 0 {
				ln.Num = i + 2 // the line it has in Render's output
			}
		}
		m = &c
	}
	l := &linter{m: m, optLabels: map[string]bool{}, counter: opt.Counter}
	if l.counter == nil {
		l.counter = roughCounter{}
	}
	for _, ln := range m.Lines {
		if ln.Word == "opt" && ln.Key != "" {
			l.optLabels[ln.Key] = true
		}
	}
	l.header()
	l.lines()
	l.pairs()
	l.asks()
	l.decisions()
	l.json()
	return l.diags
}

func builtLines(m *Message) bool {
	for _, l := range m.Lines {
		if l.Raw == "" {
			return true
		}
	}
	return false
}

type linter struct {
	m         *Message
	diags     []Diagnostic
	optLabels map[string]bool // the labels of opt/X lines, which rec and default may name
	counter   Counter         // Options.Counter, or the rough estimate
	// For the line that lines() is at: textWords of its Raw and their Unix timestamps,
	// which several rules read (and must not change).
	rawWords, rawUnix []tok
}

// countTokens counts s with the counter the linter was given.
func (l *linter) countTokens(s string) int { return l.counter.Count(s) }

func (l *linter) warn(line, col int, code, msg, fix string) {
	l.diags = append(l.diags, Diagnostic{Line: line, Col: max(col, 1), Severity: SeverityWarning, Code: code, Message: msg, Fix: fix})
}

func (l *linter) header() {
	h, p := l.m.Header, l.m.pos
	hl := max(p.line, 1)
	if h.Intent != "" && !slices.Contains(Intents, h.Intent) {
		fix := ""
		if near := spell.Nearest(h.Intent, Intents); near != "" && p.raw != "" {
			fix = replaceAt(p.raw, p.intent, h.Intent, near)
		}
		l.warn(hl, p.intent, "intent", "intent "+quote(h.Intent)+" is not one of "+strings.Join(Intents, ", ")+": readers may not know what it asks of them", fix)
	}
	if h.Topic != "" {
		if msg, _, ok := l.idCost(h.Topic); ok {
			l.warn(hl, p.topic, "random-id", "the topic "+msg+"; the topic is also the task's name in the state record, so make it a word (limiter)", "")
		}
	}
	if p.reHash && p.re > 0 {
		l.warn(hl, p.re, "re-form", "write re "+strconv.FormatInt(h.Re, 10)+" without the #", strings.Replace(p.raw, "re #", "re ", 1))
	}
	seen := map[string]bool{}
	for i, s := range h.To {
		if seen[s] {
			col := 1
			if i < len(p.seats) {
				col = p.seats[i]
			}
			l.warn(hl, col, "duplicate-seat", quote(s)+" is addressed twice", "")
		}
		seen[s] = true
	}
	for _, n := range p.blank {
		l.warn(n, 1, "blank-line", "a blank line between fact lines: it costs a token, counts for nothing in n, and can hide where a message was cut", "")
	}
}

// lines runs the per-line rules: the first word, dates and times, ids, bare numbers, emoji.
func (l *linter) lines() {
	for _, ln := range l.m.Lines {
		l.firstWord(ln)
		if ln.Reserved && ln.Text == "" {
			l.warn(ln.Num, ln.Col(), "empty-line", quote(ln.Head())+" with nothing after it says nothing", "")
		}
		l.oneFact(ln)
		l.rawWords = textWords(ln.Raw)
		l.rawUnix = unixHitsIn(l.rawWords)
		l.dates(ln)
		l.unixTimes(ln)
		l.ids(ln)
		l.bareNumbers(ln)
		l.emoji(ln)
	}
}

// normalizeReserved maps the spellings of reserved words that agents write (Done:, REQ,
// must_not, reqs, **ask**) to the reserved word.
func normalizeReserved(word string) (string, bool) {
	w := strings.ToLower(strings.TrimRight(word, ":.,"))
	w = strings.Trim(w, "*_`")
	w = strings.ReplaceAll(w, "_", "-")
	w = strings.ReplaceAll(w, " ", "-")
	if reservedSet[w] {
		return w, true
	}
	switch w {
	case "mustnot", "must-not:", "mustn't", "mustnt":
		return "must-not", true
	case "to-do", "todos":
		return "todo", true
	}
	if strings.HasSuffix(w, "s") && reservedSet[strings.TrimSuffix(w, "s")] {
		return strings.TrimSuffix(w, "s"), true
	}
	return "", false
}

// synonyms are first words that read as a modality but are not reserved: the line is then a
// plain fact, and the state record and the reader's obligations do not see it.
var synonyms = map[string]string{
	"required": "req", "requirement": "req", "requirements": "req", "require": "req", "requires": "req", "must": "req",
	"question": "ask", "questions": "ask",
	"forbidden": "must-not", "prohibited": "must-not", "never": "must-not", "don't": "must-not", "dont": "must-not", "do-not": "must-not",
	"allowed": "may", "permitted": "may", "permission": "may", "optional": "may",
	"finished": "done", "completed": "done", "complete": "done",
	"evidence": "ev", "proof": "ev",
	"unverified": "claim", "unproven": "claim",
	"planned": "plan", "pending": "todo", "remaining": "todo",
	"blocked": "block", "blocker": "block", "blockers": "block", "blocking": "block",
	"option": "opt", "options": "opt", "alternative": "opt",
	"recommend": "rec", "recommended": "rec", "recommendation": "rec", "suggestion": "rec",
	"fallback":   "default",
	"mitigation": "mit", "mitigations": "mit", "mitigate": "mit",
	"due":      "deadline",
	"approver": "decider", "decision-maker": "decider",
	"unclear": "unknown", "unreadable": "unknown",
}

var (
	bulletRe = regexp.MustCompile(`^(?:[-*•+]|\d{1,2}[.)])$`)
)

// firstWord checks how a line starts: bullets and markdown, misspelt reserved words, words
// that read as a modality without being one, and done #1 written with a space.
func (l *linter) firstWord(ln Line) {
	raw := ln.Raw
	col := ln.Col()
	word := ln.Head()
	lead := raw[:col-1]
	switch {
	case bulletRe.MatchString(word):
		fix := lead + ln.Text
		l.warn(ln.Num, col, "bullet", "a list bullet ("+quote(word)+") costs a token and hides the line's first word, so a reserved word after it means nothing", fix)
		return
	case strings.HasPrefix(word, "```"):
		l.warn(ln.Num, col, "markdown", "a markdown code fence: every line of a message is read as a fact", "")
		return
	case strings.Trim(word, "#") == "" && ln.Text != "":
		l.warn(ln.Num, col, "markdown", "a markdown heading: a message has one header, the first line", "")
		return
	}
	if ln.Reserved {
		if (ln.Word == "done" || ln.Word == "ev") && ln.Key == "" && strings.HasPrefix(ln.Text, "#") {
			k, rest, _ := strings.Cut(ln.Text[1:], " ")
			if validKey(strings.TrimRight(k, ":")) {
				fix := lead + ln.Word + "#" + strings.TrimRight(k, ":") + " " + strings.TrimLeft(rest, " ")
				l.warn(ln.Num, col, "pair-key", ln.Word+" and its key are written together, "+ln.Word+"#"+strings.TrimRight(k, ":")+": with a space the key is just text", strings.TrimRight(fix, " "))
			}
		}
		return
	}
	// Split a suffix off what was written (Done#1, EV#2:) before normalising the word.
	base, suffix := word, ""
	if i := strings.IndexAny(word, "#/"); i > 0 {
		base, suffix = word[:i], word[i:]
	}
	if fixed, ok := normalizeReserved(base); ok {
		suffix = strings.TrimRight(suffix, ":.,")
		fix := lead + fixed + suffix
		if ln.Text != "" {
			fix += " " + ln.Text
		}
		l.warn(ln.Num, col, "reserved-spelling", quote(word)+" is not a reserved word, so this line is a plain fact: write "+quote(fixed+suffix), fix)
		return
	}
	lw := strings.ToLower(strings.TrimRight(base, ":"))
	if lw == "must" && strings.HasPrefix(ln.Text, "not ") {
		fix := lead + "must-not " + strings.TrimPrefix(ln.Text, "not ")
		l.warn(ln.Num, col, "reserved-spelling", "must not is written as one word, must-not: as two words the line is a plain fact", fix)
		return
	}
	if r, ok := synonyms[lw]; ok && !startsWithNumber(ln.Text) {
		// `remaining 188000`, `complete 80%`: the word labels a number; it is not a modality.
		fix := lead + r
		if ln.Text != "" {
			fix += " " + ln.Text
		}
		l.warn(ln.Num, col, "modality-word", quote(base)+" reads as a modality but is not reserved, so the line is a plain fact: if you mean "+r+", write "+quote(r), fix)
	}
}

// dates warns on every date or time not written ISO basic, with the rewrite and its saving.
func (l *linter) dates(ln Line) {
	if ln.Text == "" {
		return
	}
	text := ln.Text
	for _, h := range findDates(text) {
		written := text[h.start:h.end]
		col := ln.TextCol() + h.start
		if h.rewrite == "" {
			msg := quote(written) + " is " + h.why + ": write an ISO basic UTC time such as 20260919T1200Z"
			l.warn(ln.Num, col, "date-format", msg, "")
			continue
		}
		before := ln.render()
		newText := text[:h.start] + h.rewrite + text[h.end:]
		after := Line{Word: ln.Word, Key: ln.Key, Mark: ln.Mark, Text: newText}.render()
		saved := l.countTokens(before) - l.countTokens(after)
		msg := quote(written) + " is " + h.why + ": ISO basic " + h.rewrite + " says the same"
		switch {
		case saved > 0:
			msg += " in " + plural(saved, "token") + " fewer"
		case saved < 0:
			msg += " in " + plural(-saved, "token") + " more, but one form is what every reader parses the same way"
		}
		if h.assumeUTC {
			msg += " (no zone was written: the rewrite assumes UTC)"
		}
		l.warn(ln.Num, col, "date-format", msg, ln.Raw[:ln.Col()-1]+after)
	}
}

// splitWords are the modalities whose line holds exactly one obligation, permission or
// finished item: joined with ';', the parts share one word and one count in n, and a reader
// (or the state record) may keep only the first.
var splitWords = map[string]bool{"req": true, "must-not": true, "may": true, "done": true, "todo": true, "ask": true}

// oneFact warns on a reserved line that joins several facts with ';', with the split lines.
func (l *linter) oneFact(ln Line) {
	if !splitWords[ln.Word] || ln.Key != "" || !strings.Contains(ln.Text, "; ") {
		return
	}
	var parts []string
	for _, p := range strings.Split(ln.Text, "; ") {
		if p = strings.TrimSpace(p); p != "" {
			parts = append(parts, ln.Word+" "+p)
		}
	}
	if len(parts) < 2 {
		return
	}
	l.warn(ln.Num, ln.Col(), "one-fact", plural(len(parts), "fact")+" on one "+ln.Word+" line: write one per line, each with its own "+ln.Word+", and count them in n", strings.Join(parts, "\n"))
}

// timeWords label a number as a point in time, so that a 10- or 13-digit number after one
// reads as a Unix timestamp.
var timeWords = map[string]bool{"deadline": true, "eta": true, "at": true, "by": true, "until": true, "since": true, "expires": true, "ts": true, "time": true, "timestamp": true, "due": true, "from": true, "before": true, "after": true, "started": true, "ended": true}

// unixHits finds the Unix timestamps in a line: 10 or 13 digits after a word that labels a
// time, between the years 2000 and 2100.
func unixHits(ln Line) []tok { return unixHitsIn(textWords(ln.Raw)) }

// unixHitsIn is unixHits on the line's words (textWords of its Raw).
func unixHitsIn(words []tok) []tok {
	var out []tok
	for i, w := range words {
		if i == 0 || !(len(w.s) == 10 || len(w.s) == 13) || !allDigits(w.s) {
			continue
		}
		if !timeWords[strings.ToLower(strings.TrimRight(words[i-1].s, ":="))] {
			continue
		}
		secs, _ := strconv.ParseInt(w.s, 10, 64)
		if len(w.s) == 13 {
			secs /= 1000
		}
		if secs >= 946684800 && secs <= 4102444800 {
			out = append(out, w)
		}
	}
	return out
}

// unixTimes warns on Unix timestamps, which no reader converts in its head.
func (l *linter) unixTimes(ln Line) {
	for _, w := range l.rawUnix {
		secs, _ := strconv.ParseInt(w.s, 10, 64)
		if len(w.s) == 13 {
			secs /= 1000
		}
		iso := FormatTime(time.Unix(secs, 0))
		fix := ln.Raw[:w.col-1] + iso + ln.Raw[w.col-1+len(w.s):]
		l.warn(ln.Num, w.col, "date-format", quote(w.s)+" reads as a Unix timestamp, which a reader cannot check at a glance: ISO basic "+iso, fix)
	}
}

// emoji warns on pictographs: each costs several tokens and says nothing a word does not.
func (l *linter) emoji(ln Line) {
	for i, r := range ln.Raw {
		if !unicode.Is(unicode.So, r) || r < 0x2100 || r == '→' {
			continue // arrows and letter-like symbols are cheap and carry meaning
		}
		end := i + utf8.RuneLen(r)
		for end < len(ln.Raw) {
			r2, n := utf8.DecodeRuneInString(ln.Raw[end:])
			if r2 != 0xFE0F && r2 != 0x200D && !unicode.Is(unicode.So, r2) && !unicode.Is(unicode.Sk, r2) {
				break
			}
			end += n
		}
		e := ln.Raw[i:end]
		if l.countTokens(e) < 2 {
			continue // a one-token mark costs what a word costs
		}
		l.warn(ln.Num, i+1, "emoji", quote(e)+" costs "+plural(l.countTokens(e), "token")+" and says nothing a word does not (done, claim, block…)", "")
		return
	}
}

// ids warns on random-looking ids, with their token cost.
func (l *linter) ids(ln Line) {
	if ln.Word == "ev" || ln.Text == "" {
		return // evidence names shas and run ids, which are what they are
	}
	words := textWords(ln.Text)
	for i, w := range words {
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

// textWords splits s into words with their 1-based columns, trimming punctuation around them.
func textWords(s string) []tok {
	var out []tok
	for _, t := range tokens(s) {
		trimmed := strings.TrimLeft(t.s, `([{<"'`)
		off := len(t.s) - len(trimmed)
		trimmed = strings.TrimRight(trimmed, `)]}>"',;:.!?`)
		if trimmed == "" {
			continue
		}
		out = append(out, tok{trimmed, t.col + off})
	}
	return out
}

var (
	uuidRe = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	humpRe = regexp.MustCompile(`[A-Z]?[a-z]+|[A-Z]+(?:[A-Z][a-z]|$|[^A-Za-z])?|\d+`)
	unitRe = regexp.MustCompile(`^\d+(?:\.\d+)?(?:[a-zA-Zµ%]{1,5})$|^(?:\d+[a-z]{1,3})+$`)
	// Product and model names carry digits by design; their cost is not the sender's choice.
	productPrefix = []string{"gpt", "claude", "gemini", "llama", "mistral", "qwen", "deepseek", "sonnet", "opus", "haiku", "o1", "o3", "o4", "o200k", "cl100k", "utf", "sha", "ipv", "http", "x86", "arm64", "amd64", "win", "macos", "ubuntu", "debian", "node", "python", "go1", "es20", "iso"}
)

// idCost decides whether w is an id that costs more than it needs to: random-looking (a
// UUID, base62 or hex noise inside a name) or an id with digits that costs six tokens or
// more. A bare commit sha is exempt: no word can replace it. It returns the phrase to put in
// the warning.
func (l *linter) idCost(w string) (msg string, random, ok bool) {
	if len(w) < 6 || strings.ContainsAny(w, "/.@=$~+:") || strings.Contains(w, "://") {
		return "", false, false
	}
	for _, r := range w {
		if !(r < unicode.MaxASCII && (isAlnum(byte(r)) || r == '-')) {
			return "", false, false
		}
	}
	hasDigit := strings.IndexFunc(w, unicode.IsDigit) >= 0
	hasLetter := strings.IndexFunc(w, unicode.IsLetter) >= 0
	if !hasDigit && strings.IndexFunc(w[1:], unicode.IsUpper) < 0 {
		return "", false, false // a plain word, or a word-id such as rate-limit
	}
	if unitRe.MatchString(w) || isNumber(w) || extISORe.MatchString(w) || len(findDates(w)) > 0 || len(isoBasicSpans(w)) > 0 {
		return "", false, false // numbers with units and dates have their own rules
	}
	if IsHexSHA(w) {
		return "", false, false // a commit name is what it is; no word can replace it
	}
	if strings.ToUpper(w) == w && strings.Contains(w, "_") {
		return "", false, false // an environment variable name: legible by convention
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

var (
	numberRe   = regexp.MustCompile(`^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$`)
	httpStatus = map[string]bool{"200": true, "201": true, "202": true, "204": true, "301": true, "302": true, "304": true, "307": true, "308": true, "400": true, "401": true, "403": true, "404": true, "405": true, "409": true, "410": true, "413": true, "415": true, "422": true, "429": true, "500": true, "501": true, "502": true, "503": true, "504": true}
	stopwords  = map[string]bool{"a": true, "an": true, "the": true, "and": true, "or": true, "of": true, "to": true, "in": true, "on": true, "at": true, "by": true, "for": true, "with": true, "from": true, "is": true, "are": true, "was": true, "were": true, "be": true, "if": true, "then": true, "than": true, "when": true, "but": true, "as": true, "it": true, "into": true, "about": true, "around": true, "approx": true, "approximately": true, "up": true, "over": true, "under": true, "only": true, "just": true, "all": true, "still": true, "now": true, "so": true, "vs": true, "&": true, "→": true, "=": true, "-": true}
)

var ratioWords = map[string]bool{"of": true, "in": true, "/": true, "out": true, "per": true}

// bridge words sit between a label and its number: limit to 100, replicas at 3.
var bridge = map[string]bool{"to": true, "at": true, "of": true, "in": true, "by": true, "from": true, "under": true, "over": true, "than": true, "around": true, "about": true, "approx": true, "approximately": true, "is": true, "=": true, "→": true, "->": true}

// isNumber reports whether s matches numberRe. Most words are not numbers: anything but a
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
	return numberRe.MatchString(s)
}

// bareNumbers warns on numbers whose role a reader cannot infer: no label before them, no
// unit after them. A key earns its tokens exactly there (150000 alone; 150000 tokens or
// budget 150000 is clear). HTTP status codes name themselves.
func (l *linter) bareNumbers(ln Line) {
	all := l.rawWords
	unixs := l.rawUnix
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

// pairs checks done/ev pairing: every done should have evidence, evidence should name a kind
// the server can check, and tests are proven by runs, not commits.
func (l *linter) pairs() {
	type done struct {
		line  Line
		kinds []string
	}
	var dones []*done
	byKey := map[string]*done{}
	pending := map[string][]string{} // evidence kinds of ev#k seen before their done#k
	lastDone := map[string]int{}     // line of the last done#k, to spot an ev#k written above it
	for _, ln := range l.m.Lines {
		if ln.Word == "done" && ln.Key != "" {
			lastDone[ln.Key] = ln.Num
		}
	}
	var last *done
	for _, ln := range l.m.Lines {
		switch ln.Word {
		case "done":
			d := &done{line: ln}
			dones = append(dones, d)
			last = d
			if ln.Key == "" {
				continue
			}
			if prev, dup := byKey[ln.Key]; dup {
				l.warn(ln.Num, ln.Col(), "duplicate-key", "done#"+ln.Key+" is used twice (first on line "+strconv.Itoa(prev.line.Num)+"): evidence cannot say which one it proves", "")
			}
			byKey[ln.Key] = d // an ev#k below pairs with the nearest done#k above it
		case "ev":
			kind, _, _ := ParseEvidence(ln.Text)
			if kind == "" {
				l.evidenceKind(ln)
			}
			switch {
			case ln.Key == "":
				if last != nil {
					last.kinds = append(last.kinds, kind)
				}
			case byKey[ln.Key] != nil:
				byKey[ln.Key].kinds = append(byKey[ln.Key].kinds, kind)
			case lastDone[ln.Key] > ln.Num:
				l.warn(ln.Num, ln.Col(), "ev-order", "ev#"+ln.Key+" comes before done#"+ln.Key+": put evidence under the done it proves", "")
				pending[ln.Key] = append(pending[ln.Key], kind)
			}
		}
	}
	for k, kinds := range pending {
		if d := byKey[k]; d != nil {
			d.kinds = append(d.kinds, kinds...)
		}
	}
	for _, d := range dones {
		ln := d.line
		head := ln.Head()
		if len(d.kinds) == 0 {
			l.warn(ln.Num, ln.Col(), "done-without-ev", head+" has no ev under it, so it is only a claim: add ev commit <sha> for code or ev run <id> for a test run, or write claim",
				ln.Raw[:ln.Col()-1]+"claim "+ln.Text)
			continue
		}
		if aboutTests(ln.Text) && !slices.Contains(d.kinds, EvidenceRun) && slices.Contains(d.kinds, EvidenceCommit) {
			l.warn(ln.Num, ln.Col(), "test-evidence", head+" is about tests but its evidence is a commit: a commit proves code exists; only a run reference (ev run <id>) proves a test ran, so this is a claim",
				ln.Raw[:ln.Col()-1]+"claim "+ln.Text)
		}
	}
}

var (
	testsRe   = regexp.MustCompile(`(?i)\b(tests?|tested|testing|specs?|suites?|passing|passes|passed|green|ci|e2e|coverage|vitest|jest|pytest|go test)\b`)
	bareShaRe = regexp.MustCompile(`^(?:(?:sha|hash|commit:|#)\s*)?([0-9a-fA-F]{7,40})\b(.*)$`)
)

func aboutTests(s string) bool { return testsRe.MatchString(s) }

// evidenceKind explains an ev line whose evidence no server can check.
func (l *linter) evidenceKind(ln Line) {
	fix := ""
	if m := bareShaRe.FindStringSubmatch(ln.Text); m != nil && IsHexSHA(m[1]) && strings.ContainsAny(m[1], "0123456789") {
		fix = ln.Raw[:ln.Col()-1] + ln.Head() + " commit " + strings.ToLower(m[1]) + m[2]
	}
	l.warn(ln.Num, ln.TextCol(), "ev-kind", "this evidence names no kind a server can check: write commit <sha> [on <branch>] (code exists) or run <id> (a test ran)", fix)
}

// asks checks what makes silence a valid answer: every ask has a time, a default has an ask,
// a decider has something to decide.
func (l *linter) asks() {
	hasAsk, hasReq := false, false
	for _, ln := range l.m.Lines {
		hasAsk = hasAsk || ln.Word == "ask"
		hasReq = hasReq || ln.Word == "req"
	}
	h, p := l.m.Header, l.m.pos
	switch {
	case h.Intent == "propose" && !hasAsk:
		// The study's failure: a reader with every fact of a proposal wrote "must do:
		// nothing required", because nothing asked it to decide.
		l.warn(max(p.line, 1), p.intent, "no-ask", "a proposal with no ask: nothing tells the reader it must decide, or by when, so it may do nothing or take the choice as made", "add ask <what to decide>, <time>")
	case h.Intent == "request" && !hasAsk && !hasReq:
		l.warn(max(p.line, 1), p.intent, "no-ask", "a request with no req or ask: nothing tells the reader what it must do", "add req <what to do> or ask <question>, <time>")
	}
	for _, ln := range l.m.Lines {
		switch ln.Word {
		case "ask", "deadline":
			if _, ok := ln.Time(); ok || len(findDates(ln.Text)) > 0 || len(unixHits(ln)) > 0 || ln.Text == "" {
				continue
			}
			if ln.Word == "ask" {
				l.warn(ln.Num, ln.Col(), "ask-no-time", "this ask has no time: the reader cannot tell when silence becomes the answer; add an ISO basic time", ln.Raw[:ln.Col()-1]+ln.Head()+" "+ln.Text+", <time, e.g. 20260919T1200Z>")
			} else {
				l.warn(ln.Num, ln.Col(), "deadline-no-time", "this deadline has no time: add an ISO basic time", "")
			}
		case "default":
			if !hasAsk {
				l.warn(ln.Num, ln.Col(), "default-without-ask", "a default with no ask: a default is what happens when nobody answers by the ask time, and no ask says what to answer or by when", "add ask <question>, <time>")
			}
		case "decider":
			if !hasAsk && h.Intent != "decide" && h.Intent != "answer" && h.Intent != "propose" {
				l.warn(ln.Num, ln.Col(), "decider-without-ask", "a decider with no ask: the reader is told who chooses but not what or by when, and may take the choice as made", "add ask <what to decide>, <time>")
			}
		}
	}
}

var (
	// "yu decides", "Yu (CTO) decided", "we chose A", "lead has approved".
	decidedRe = regexp.MustCompile(`(?i)(^|[^\w-])([\p{L}][\w.-]*)(\s*\([^)]*\))?\s+(?:has\s+|have\s+|had\s+|is\s+|are\s+)?(decides|decided|chose|chosen|chooses|approved|approves|signed off|picked|settled on|went with|goes with|going with|go with)\b`)
	// "decision: A", "decided B", "approved", "final: A" as the first word.
	decidedWords = map[string]bool{"decision": true, "decided": true, "chosen": true, "approved": true, "agreed": true, "final": true, "verdict": true, "resolved": true, "settled": true, "resolution": true, "outcome-decided": true}
	// An ask that asks for a choice, as opposed to an ask for information.
	choiceRe    = regexp.MustCompile(`(?i)\b(decide|decision|choose|choice|pick|select|approve|approval|sign off|go/no-go|accept|decline|or)\b`)
	conditional = map[string]bool{"if": true, "once": true, "when": true, "until": true, "after": true, "before": true, "unless": true, "whether": true, "who": true, "whoever": true, "nobody": true, "no-one": true, "noone": true, "whichever": true, "till": true}
)

// decisions warns on lines that read as a decision already taken in a message that only asks
// for one. The study's cheapest format wrote "Yu decides" for "Yu decides by this time"; its
// reader answered "Decision made" and started building.
func (l *linter) decisions() {
	intent := l.m.Header.Intent
	if intent == "decide" || intent == "answer" {
		return
	}
	asksForOne := intent == "propose"
	var askTime, decider, deadline string
	hasAsk := false
	for _, ln := range l.m.Lines {
		switch ln.Word {
		case "ask":
			hasAsk = true
			asksForOne = asksForOne || choiceRe.MatchString(ln.Text)
			if t, ok := ln.Time(); ok && askTime == "" {
				askTime = FormatTime(t)
			}
		case "opt":
			asksForOne = true
		case "decider":
			asksForOne = true
			decider = ln.Text
		case "deadline":
			if t, ok := ln.Time(); ok && deadline == "" {
				deadline = FormatTime(t)
			} else if hits := findDates(ln.Text); deadline == "" && len(hits) > 0 && strings.Contains(hits[0].rewrite, "T") {
				deadline = hits[0].rewrite
			}
		}
	}
	if askTime == "" {
		askTime = deadline // the best guess at the time the fix's ask needs
	}
	if !asksForOne {
		return
	}
	for _, ln := range l.m.Lines {
		switch ln.Word {
		case "ask", "opt", "rec", "default", "decider", "risk", "mit", "claim", "plan", "unknown":
			continue // these already say the choice is open, or are about something else
		}
		lw := strings.ToLower(strings.TrimRight(ln.Word, ":"))
		var who, phrase string
		col := ln.Col()
		if decidedWords[lw] {
			phrase = ln.Word
		} else if m := decidedIndex(ln.Raw); m != nil {
			name := ln.Raw[m[4]:m[5]]
			before := strings.Fields(strings.ToLower(ln.Raw[:m[4]]))
			if conditional[strings.ToLower(name)] || (len(before) > 0 && conditional[strings.Trim(before[len(before)-1], ",;:")]) {
				continue
			}
			who = name
			phrase = strings.TrimSpace(ln.Raw[m[4]:m[1]])
			col = m[4] + 1
		} else {
			continue
		}
		t := askTime
		if tt, ok := (Line{Text: ln.Raw}).Time(); ok {
			t = FormatTime(tt) // the time may be the line's first word, as in the study
		}
		if t == "" {
			t = "<time>"
		}
		var fix string
		switch {
		case hasAsk && decider != "":
			fix = "drop this line: decider and ask already say who chooses and by when"
		case hasAsk:
			fix = "decider " + strings.ToLower(firstNonEmpty(pronounless(who), "<seat>"))
		default:
			fix = "decider " + strings.ToLower(firstNonEmpty(pronounless(who), "<seat>")) + "\nask <what to decide>, " + t
		}
		l.warn(ln.Num, col, "decision-taken", quote(phrase)+" reads as a decision already taken, but this message asks for one ("+intentPhrase(intent)+"): a reader may act on it as settled; say who chooses with decider and what by when with ask", fix)
	}
}

// decidedHints are substrings every decidedRe match contains; testing them first keeps the
// regular expression off the lines that cannot match.
var decidedHints = []string{"decid", "chose", "choos", "approv", "signed off", "picked", "settled on", "went with", "goes with", "going with", "go with"}

func decidedIndex(raw string) []int {
	lower := strings.ToLower(raw)
	for _, h := range decidedHints {
		if strings.Contains(lower, h) {
			return decidedRe.FindStringSubmatchIndex(raw)
		}
	}
	return nil
}

func pronounless(who string) string {
	switch strings.ToLower(who) {
	case "", "we", "i", "they", "you", "he", "she", "team", "everyone":
		return ""
	}
	return who
}

func intentPhrase(intent string) string {
	if intent == "propose" {
		return "intent propose"
	}
	return "it has an ask or options"
}

// json warns on JSON inside a message, with what it costs against fact lines.
func (l *linter) json() {
	var body []string
	first := Line{}
	for _, ln := range l.m.Lines {
		t := strings.TrimSpace(ln.Raw)
		if first.Num == 0 && (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") || jsonPairRe.MatchString(t)) {
			first = ln
		}
		body = append(body, ln.Raw)
	}
	if first.Num == 0 {
		return
	}
	msg := "JSON in a message: its quotes, braces and repeated keys cost more than the facts they carry; write one fact per line"
	joined := strings.Join(body, "\n")
	if est, ok := EstimateJSON([]byte(joined)); ok {
		now := l.countTokens(joined)
		if lines := l.countTokens(est); lines < now {
			msg += " (the JSON costs " + plural(now, "token") + "; as fact lines about " + strconv.Itoa(lines) + ")"
		}
	}
	l.warn(first.Num, first.Col(), "json-body", msg, "")
}

var jsonPairRe = regexp.MustCompile(`^"[^"]+"\s*:\s*\S`)

// EstimateJSON rewrites a JSON document as convention fact lines, one per scalar value, keyed
// by the value's own key, with dates in ISO basic: a rough but honest lower bound on what the
// same facts cost as a convention message. ok is false when data is not JSON.
func EstimateJSON(data []byte) (string, bool) {
	var v any
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return "", false
	}
	if dec.More() {
		return "", false
	}
	var lines []string
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				walk(k, x[k])
			}
		case []any:
			var scalars []string
			for _, e := range x {
				switch e.(type) {
				case map[string]any, []any:
					walk(key, e)
				default:
					scalars = append(scalars, scalarText(e))
				}
			}
			if len(scalars) > 0 {
				lines = append(lines, strings.TrimSpace(key+" "+strings.Join(scalars, ", ")))
			}
		default:
			lines = append(lines, strings.TrimSpace(key+" "+scalarText(x)))
		}
	}
	walk("", v)
	out := "v1 note topic to all n=" + strconv.Itoa(len(lines)) + "\n"
	for _, ln := range lines {
		out += ln + "\n"
	}
	return out, true
}

func scalarText(v any) string {
	switch x := v.(type) {
	case nil:
		return "none"
	case string:
		for _, h := range findDates(x) {
			if h.rewrite != "" {
				return x[:h.start] + h.rewrite + x[h.end:]
			}
		}
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}
