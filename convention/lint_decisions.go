// Decision rules: lines that read as a decision already taken in a message that asks for one.

package convention

import (
	"strings"

	"github.com/parleyhq/parley/internal/lazyre"
)

var (
	// "yu decides", "Yu (CTO) decided", "we chose A", "lead has approved".
	decidedRe = lazyre.New(`(?i)(^|[^\w-])([\p{L}][\w.-]*)(\s*\([^)]*\))?\s+(?:has\s+|have\s+|had\s+|is\s+|are\s+)?(decides|decided|chose|chosen|chooses|approved|approves|signed off|picked|settled on|went with|goes with|going with|go with)\b`)
	// "decision: A", "decided B", "approved", "final: A" as the first word.
	decidedWords = map[string]bool{"decision": true, "decided": true, "chosen": true, "approved": true, "agreed": true, "final": true, "verdict": true, "resolved": true, "settled": true, "resolution": true, "outcome-decided": true}
	// An ask that asks for a choice, as opposed to an ask for information.
	choiceRe    = lazyre.New(`(?i)\b(decide|decision|choose|choice|pick|select|approve|approval|sign off|go/no-go|accept|decline|or)\b`)
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
	if !lowerStemsIn(raw, decidedHintIndex) { // one pass for all the hints
		return nil
	}
	// The hints hold "decid", which "decider yu" does too: the expression is asked only when
	// one of its verbs is there as well, its case folded as the expression's (?i) folds it
	// (FuzzWindows holds decidedIndex to the hint-by-hint search and the expression).
	if !foldedStemsIn(raw, decidedVerbIndex) {
		return nil
	}
	return decidedRe.FindStringSubmatchIndex(raw)
}

// decidedHintIndex is decidedHints by their first byte; decidedVerbIndex holds the verbs of
// decidedRe, or a part of each (chose for chosen, choos for chooses).
var decidedHintIndex, decidedVerbIndex = newStemIndex(decidedHints), newStemIndex([]string{"decides", "decided", "chose", "choos",
	"approved", "approves", "signed off", "picked", "settled on", "went with", "goes with", "going with", "go with"})

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
