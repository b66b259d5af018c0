// Header rules: the intent, the topic, re and the addressees of the first line.

package convention

import (
	"slices"
	"strconv"
	"strings"

	"github.com/parleyhq/parley/internal/spell"
)

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
	var seen map[string]bool // made for a second addressee: one cannot repeat
	for i, s := range h.To {
		if i == 1 {
			seen = map[string]bool{h.To[0]: true}
		}
		if seen[s] {
			col := 1
			if i < len(p.seats) {
				col = p.seats[i]
			}
			l.warn(hl, col, "duplicate-seat", quote(s)+" is addressed twice", "")
		}
		if seen != nil {
			seen[s] = true
		}
	}
	for _, n := range p.blank {
		l.warn(n, 1, "blank-line", "a blank line between fact lines: it costs a token, counts for nothing in n, and can hide where a message was cut", "")
	}
}
