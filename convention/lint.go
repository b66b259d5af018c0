// The linter: Lint runs the groups of rules, each in lint_<group>.go (header, words, dates,
// ids, numbers, evidence, asks, decisions, json); the per-line rules run from lines.

package convention

import (
	"slices"
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
	l := &linter{m: m, counter: opt.Counter}
	if l.counter == nil {
		l.counter = roughCounter{}
	}
	for _, ln := range m.Lines {
		if ln.Word == "opt" && ln.Key != "" {
			if l.optLabels == nil {
				l.optLabels = map[string]bool{}
			}
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
	optLabels map[string]bool // the labels of opt/X lines, which rec and default may name (nil: none)
	counter   Counter         // Options.Counter, or the rough estimate
}

// countTokens counts s with the counter the linter was given.
func (l *linter) countTokens(s string) int { return l.counter.Count(s) }

func (l *linter) warn(line, col int, code, msg, fix string) {
	l.diags = append(l.diags, Diagnostic{Line: line, Col: max(col, 1), Severity: SeverityWarning, Code: code, Message: msg, Fix: fix})
}

// lines runs the per-line rules: the first word, dates and times, ids, bare numbers, emoji.
func (l *linter) lines() {
	// A line's words (textWords of its Raw), which several rules read and none keeps, and the
	// ids rule's: buffers on the stack, reused line after line, for lines of up to 16 words.
	var rawBuf, idBuf [16]tok
	raw, ids := rawBuf[:0], idBuf[:0]
	for _, ln := range l.m.Lines {
		l.firstWord(ln)
		if ln.Reserved && ln.Text == "" {
			l.warn(ln.Num, ln.Col(), "empty-line", quote(ln.Head())+" with nothing after it says nothing", "")
		}
		l.oneFact(ln)
		raw = appendTextWords(raw[:0], ln.Raw)
		unix := unixHitsIn(raw) // the line's Unix timestamps
		l.dates(ln)
		l.unixTimes(ln, unix)
		ids = l.ids(ln, raw, ids[:0])
		l.bareNumbers(ln, raw, unix)
		l.emoji(ln)
	}
}

// textWords splits s into words with their 1-based columns, trimming punctuation around them.
func textWords(s string) []tok { return appendTextWords(nil, s) }

// appendTextWords appends the words of s (textWords) to dst.
func appendTextWords(dst []tok, s string) []tok {
	toks := appendTokens(dst, s)
	out := toks[:len(dst)] // trimmed in place: each word is written at or before its token
	toks = toks[len(dst):]
	for _, t := range toks {
		a, b := 0, len(t.s)
		for a < b && openPunct[t.s[a]] {
			a++
		}
		for b > a && closePunct[t.s[b-1]] {
			b--
		}
		if a == b {
			continue
		}
		out = append(out, tok{t.s[a:b], t.col + a})
	}
	return out
}

// textWordsIn appends the words of ln.Text (textWords) to dst. raw must be the words of
// ln.Raw: when Text is the tail of Raw that parseLine cut, it starts where a token of Raw
// starts, so its words are those of Raw from its column on, which are copied with their
// columns made Text's rather than split again. Otherwise Text is split.
func textWordsIn(dst []tok, ln Line, raw []tok) []tok {
	tc := ln.textCol
	if tc <= 0 || tc-1+len(ln.Text) > len(ln.Raw) || ln.Raw[tc-1:tc-1+len(ln.Text)] != ln.Text {
		return appendTextWords(dst, ln.Text)
	}
	for _, w := range raw {
		if w.col >= tc {
			dst = append(dst, tok{w.s, w.col - tc + 1})
		}
	}
	return dst
}

// The punctuation textWords trims: openPunct before a word, closePunct after it.
var openPunct, closePunct = byteSet(`([{<"'`), byteSet(`)]}>"',;:.!?`)

func byteSet(chars string) (set [256]bool) {
	for i := 0; i < len(chars); i++ {
		set[chars[i]] = true
	}
	return set
}
