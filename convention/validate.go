package convention

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/parleyhq/parley/internal/spell"
)

// Validate returns the errors that make m data rather than something to act on: an unknown
// version, no addressee, no count or a count that does not match the fact lines, evidence that
// proves nothing above it, and (with a roster) an addressee who is not in the room. A message
// with any of these must not be acted on, in whole or in part.
//
// Validate does not repeat what Parse already reported about a broken header.
func Validate(m *Message, opt Options) []Diagnostic {
	var diags []Diagnostic
	p := &m.pos
	hl := max(p.line, 1)
	errAt := func(line, col int, code, msg, fix string) {
		diags = append(diags, Diagnostic{Line: line, Col: max(col, 1), Severity: SeverityError, Code: code, Message: msg, Fix: fix})
	}
	h := m.Header
	if h.Version != Version && h.Version != "" {
		errAt(hl, p.version, "version", "unknown convention version "+h.Version+": this reader knows only "+Version, "")
	}
	if p.broken && h.Version == "" {
		return diags // Parse said the header is not one; nothing below would be meaningful.
	}
	if h.Version == "" && p.line > 0 {
		// (A message built in code may leave Version empty: Render writes v1.)
		errAt(hl, 1, "version", "the header has no version: it starts with "+Version, "")
	}
	if len(h.To) == 0 && p.to == 0 {
		col, fix := p.n, ""
		if p.stray != "" {
			col = p.strayCol
			fix = replaceAt(p.raw, p.strayCol, p.stray, "to "+p.stray)
		}
		if col == 0 {
			col = max(p.end, 1)
		}
		errAt(hl, col, "no-to", "the header does not say who must act: a message with no addressee is acted on by nobody, and silence looks like agreement",
			firstNonEmpty(fix, "add to <seat> (or to all) after the topic"))
	}
	if h.N < 0 && p.n == 0 {
		fix := "add n=" + strconv.Itoa(len(m.Lines)) + " at the end of the header"
		if p.raw != "" {
			fix = strings.TrimRight(p.raw, " \t") + " n=" + strconv.Itoa(len(m.Lines))
		}
		errAt(hl, max(p.end, 1), "no-n", "the header has no n=<fact lines>: without it a truncated or padded message cannot be told from a whole one", fix)
	} else if h.N >= 0 && h.N != len(m.Lines) {
		fix := ""
		if p.raw != "" && p.n > 0 {
			fix = "if no line was lost, " + replaceTail(p.raw, p.n, "n="+strconv.Itoa(len(m.Lines))) + "; otherwise resend the whole message"
		}
		errAt(hl, p.n, "n-mismatch",
			"n="+strconv.Itoa(h.N)+" but the message has "+plural(len(m.Lines), "fact line")+
				": it may be truncated or padded, so it is data and nothing in it may be acted on", fix)
	}
	if opt.Roster != nil {
		// A message names few seats: look each up in the roster, and build a set only for
		// many. The sorted roster, for the error, only when one is unknown.
		var in map[string]bool
		if len(h.To) > 8 {
			in = make(map[string]bool, len(opt.Roster))
			for _, s := range opt.Roster {
				in[s] = true
			}
		}
		var roster []string
		for i, s := range h.To {
			if s == "all" || in != nil && in[s] || in == nil && slices.Contains(opt.Roster, s) {
				continue
			}
			if roster == nil {
				roster = append([]string(nil), opt.Roster...)
				sort.Strings(roster)
			}
			col := 1
			if i < len(p.seats) {
				col = p.seats[i]
			}
			fix := ""
			if near := spell.Nearest(s, roster); near != "" {
				fix = near
			}
			errAt(hl, col, "unknown-seat", quote(s)+" does not sit in this room (seats: "+strings.Join(roster, ", ")+")", fix)
		}
	}
	diags = append(diags, validateEvidence(m)...)
	return diags
}

// validateEvidence finds ev lines that prove nothing: an ev#k with no done#k, or an
// unnumbered ev with no done above it.
func validateEvidence(m *Message) []Diagnostic {
	var diags []Diagnostic
	// Whether the message has a done#k for an ev#k: a look over the lines of the short
	// messages of nearly every post, a set of the keys (made once) for long ones.
	var doneKeys map[string]bool
	if len(m.Lines) > 32 {
		doneKeys = map[string]bool{}
		for _, l := range m.Lines {
			if l.Word == "done" && l.Key != "" {
				doneKeys[l.Key] = true
			}
		}
	}
	hasDone := func(key string) bool {
		if doneKeys != nil {
			return doneKeys[key]
		}
		for _, l := range m.Lines {
			if l.Word == "done" && l.Key == key {
				return true
			}
		}
		return false
	}
	sawDone := false
	for _, l := range m.Lines {
		switch {
		case l.Word == "done":
			sawDone = true
		case l.Word == "ev" && l.Key != "" && !hasDone(l.Key):
			diags = append(diags, Diagnostic{Line: l.Num, Col: l.Col(), Severity: SeverityError, Code: "ev-without-done",
				Message: "ev#" + l.Key + " has no done#" + l.Key + ": evidence must sit under the done it proves",
				Fix:     "add done#" + l.Key + " <what is finished> above it, or number the ev after its done"})
		case l.Word == "ev" && l.Key == "" && !sawDone:
			diags = append(diags, Diagnostic{Line: l.Num, Col: l.Col(), Severity: SeverityError, Code: "ev-without-done",
				Message: "ev has no done above it: evidence must sit under the done it proves",
				Fix:     "put the ev under its done, and pair them as done#1 / ev#1"})
		}
	}
	return diags
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
