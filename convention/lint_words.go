// Wording rules: how a line starts (bullets, markdown, misspelt reserved words, words that
// read as a modality), one fact per reserved line, and emoji.

package convention

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

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

// isBullet reports whether a line's first word is a list bullet: -, *, • or +, or one or two
// digits and . or ) (what the expression ^(?:[-*•+]|\d{1,2}[.)])$ matches; every line's
// first word is tested, so without running it).
func isBullet(w string) bool {
	switch w {
	case "-", "*", "•", "+":
		return true
	}
	n := len(w)
	if n < 2 || n > 3 || (w[n-1] != '.' && w[n-1] != ')') {
		return false
	}
	return allDigits(w[:n-1])
}

// firstWord checks how a line starts: bullets and markdown, misspelt reserved words, words
// that read as a modality without being one, and done #1 written with a space.
func (l *linter) firstWord(ln Line) {
	raw := ln.Raw
	col := ln.Col()
	word := ln.Head()
	lead := raw[:col-1]
	switch {
	case isBullet(word):
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
	if i := markAt(word); i > 0 {
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

// emoji warns on pictographs: each costs several tokens and says nothing a word does not.
func (l *linter) emoji(ln Line) {
	// Every pictograph is outside ASCII: the scan starts at the first byte that is (a rune
	// starts there, as the bytes before it are one rune each), and most lines have none.
	from := 0
	for from < len(ln.Raw) && ln.Raw[from] < utf8.RuneSelf {
		from++
	}
	for i, r := range ln.Raw[from:] {
		i += from
		if r < 0x2100 || r == '→' || !unicode.Is(unicode.So, r) {
			continue // arrows and letter-like symbols are cheap and carry meaning
		}
		// Its length as written: a byte that is not UTF-8 reads as U+FFFD (a symbol too) but
		// is one byte long. Such text never gets here through Check, which refuses it first;
		// Lint is also called on messages built in code.
		_, size := utf8.DecodeRuneInString(ln.Raw[i:])
		if r == utf8.RuneError && size == 1 {
			continue
		}
		end := i + size
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
