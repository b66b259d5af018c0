package room

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/convention"
	"github.com/parleyhq/parley/evidence"
)

// parse detects the body's format, validates it against the room's policy and roster, and
// checks its addressing. seats are the room's active seats, roster the names a message may
// address (seats and "all"); neither is changed.
func (s *Service) parse(body string, p parley.Policy, seats, roster []string) (*draft, error) {
	d := &draft{body: body, tokens: s.tok.Count(body), hash: hashBody(body)}
	switch {
	case convention.Looks(body):
		d.format = parley.FormatConvention
		m, diags := convention.Check(body, convention.Options{Roster: roster, Counter: s.tok})
		if err := refuseErrors(diags); err != nil {
			return nil, err
		}
		d.conv = m
		d.topic, d.intent, d.re, d.to = m.Header.Topic, m.Header.Intent, m.Header.Re, m.Header.To
		d.warnings = diags
	case looksAACP(body):
		d.format = parley.FormatAACP
		pk, diags := checkAACP(body, roster)
		if err := refuseErrors(diags); err != nil {
			return nil, err
		}
		d.topic, d.intent, d.to = pk.topic, pk.verb, pk.to
		d.warnings = diags
	case p.Format == parley.PolicyLenient:
		d.format = parley.FormatText
		d.warnings = []parley.Diagnostic{{Line: 1, Col: 1, Severity: "warning", Code: "plain-text",
			Message: "plain text: nobody is addressed and nothing in it is checked",
			Fix:     "write the convention: v1 <intent> <topic> to <seat> n=<fact lines>, then one fact per line"}}
		return d, nil
	default:
		return nil, invalidAt(1, 1, "format",
			"this room takes the room convention or AACP packets, and the message is neither",
			"start with a header such as `v1 report limiter to lead n=3` and write one fact per line")
	}
	if err := checkAddressing(d.to, seats); err != nil {
		return nil, err
	}
	return d, nil
}

// refuseErrors turns the first error-severity diagnostic into the refusal; the others ride
// along in Fields["diagnostics"].
func refuseErrors(diags []parley.Diagnostic) error {
	var first *parley.Diagnostic
	errs := 0
	for i := range diags {
		if diags[i].Severity == convention.SeverityError {
			if first == nil {
				first = &diags[i]
			}
			errs++
		}
	}
	if first == nil {
		return nil
	}
	msg := fmt.Sprintf("line %d: %s", first.Line, first.Message)
	if errs > 1 {
		msg += fmt.Sprintf(" (and %d more %s)", errs-1, pluralWord(errs-1, "error"))
	}
	hint := "fix the lines named in diagnostics and post again; nothing was stored"
	if first.Fix != "" {
		hint = "try: " + first.Fix
	}
	all := diags
	listed, more := capDiags(all)
	if more > 0 {
		msg += fmt.Sprintf("; diagnostics lists the first %d of %d findings", len(listed), len(all))
	}
	err := parley.Errorf(parley.EINVALID, "%s", msg).WithHint("%s", hint).With("diagnostics", listed)
	if more > 0 {
		err = err.With("more_diagnostics", more)
	}
	return err
}

// checkAddressing requires at least one addressee, each an active seat of the room or `all`.
// The convention's validator already names unknown seats with a position; this catches what
// reaches here from AACP, and says so when a seat was revoked rather than never existed.
func checkAddressing(to, seats []string) error {
	if len(to) == 0 {
		return invalidAt(1, 1, "no-to", "the message names no addressee: a message to nobody is acted on by nobody",
			"address it: `to <seat>` in a convention header, `to:<seat>` in an AACP packet, or all")
	}
	for _, name := range to {
		if name == "all" || contains(seats, name) {
			continue
		}
		return invalidAt(1, 1, "unknown-seat", fmt.Sprintf("%s does not sit in this room", name),
			fmt.Sprintf("address one of: %s, or all", strings.Join(seats, ", ")))
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// asksOf lists the asks a convention message opens: one per `ask` line, due at the first ISO
// basic time in the line, with the message's `default` and `decider` lines.
//
// The store keeps one ask per line, so an ask is addressed to the header's one seat, or to
// `all` when the header names all or several seats. For several, the inbox shows the ask only
// to the seats the header names, and only they can close it by answering with `re`: the first
// answer closes it for all of them.
func asksOf(d *draft, from string) []*parley.Ask {
	if d.conv == nil {
		return nil
	}
	var dflt, decider string
	for _, l := range d.conv.Lines {
		switch {
		case l.Word == "default" && dflt == "":
			dflt = l.Text
		case l.Word == "decider" && decider == "":
			decider = l.Text
		}
	}
	to := "all"
	if len(d.to) == 1 {
		to = d.to[0]
	}
	var asks []*parley.Ask
	for _, l := range d.conv.Lines {
		if l.Word != "ask" {
			continue
		}
		var due *time.Time
		if t, ok := l.Time(); ok {
			due = &t // 00010101T0000Z too: it is long past, not "no time"
		}
		asks = append(asks, &parley.Ask{Line: l.Num, From: from, To: to, Topic: d.topic, Text: l.Text,
			Due: due, Default: dflt, Decider: decider, State: parley.AskOpen})
	}
	return asks
}

// evidencePair is a done line with the ev lines that prove it.
type evidencePair struct {
	done convention.Line
	evs  []convention.Line
}

// pairEvidence pairs every done with its ev lines: ev#k with the nearest done#k above it, an
// unnumbered ev with the nearest done above it. The pairs are appended to buf, which a caller
// may keep on its stack (every post with a done pairs its lines here); a few dones are found
// by key with a look back over them, many with a map.
func pairEvidence(m *convention.Message, buf []evidencePair) []evidencePair {
	n := 0
	for _, l := range m.Lines {
		if l.Word == "done" {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	pairs := buf[:0]
	if cap(pairs) < n {
		pairs = make([]evidencePair, 0, n)
	}
	var byKey map[string]int // nil for a few dones
	if n > 8 {
		byKey = make(map[string]int, n)
	}
	last := -1
	for _, l := range m.Lines {
		switch l.Word {
		case "done":
			pairs = append(pairs, evidencePair{done: l})
			last = len(pairs) - 1
			if byKey != nil && l.Key != "" {
				byKey[l.Key] = last
			}
		case "ev":
			j := -1
			switch {
			case l.Key != "" && byKey != nil:
				if k, ok := byKey[l.Key]; ok {
					j = k
				}
			case l.Key != "":
				for k := len(pairs) - 1; k >= 0; k-- {
					if pairs[k].done.Key == l.Key {
						j = k
						break
					}
				}
			default:
				j = last
			}
			if j >= 0 {
				pairs[j].evs = append(pairs[j].evs, l)
			}
		}
	}
	return pairs
}

// checksCommits reports whether judging d's evidence would run git: the server has a
// repository and one of d's ev lines cites a commit.
func (s *Service) checksCommits(d *draft) bool {
	if d.conv == nil || s.ev.GitRepo == "" {
		return false
	}
	for _, l := range d.conv.Lines {
		if l.Word == "ev" && evidence.Parse(l.Text).Kind == evidence.KindCommit {
			return true
		}
	}
	return false
}

// label names a done in notes: done#1 → "#1"; an unnumbered done by its line, " line 4".
func label(done convention.Line) string {
	if done.Key != "" {
		return "#" + done.Key
	}
	return " line " + strconv.Itoa(done.Num)
}

// appendLabel appends label(done) to dst: evidenceNotes builds each note with the label from a
// buffer on its stack, in the note's one allocation.
func appendLabel(dst []byte, done convention.Line) []byte {
	if done.Key != "" {
		return append(append(dst, '#'), done.Key...)
	}
	return strconv.AppendInt(append(dst, " line "...), int64(done.Num), 10)
}

// evidenceBudget bounds the time all evidence checks of one post may take together.
const evidenceBudget = 10 * time.Second

// evidenceNotes resolves every ev line and freezes the verdicts as notes:
//
//	! ev#1 verified: commit 3f9a2c1 on feat/rate-limit
//	! ev#2 unverified: commit 3f9a2c1 not found in the repository
//	! claim#3 unproven: a commit proves code exists, not that tests ran
//	! done#4 unproven: no ev line under it
//
// At most maxChecks ev lines are resolved (each can run git twice); the rest, and any left
// when the request's deadline has passed, are frozen as unverified with the reason. The
// status of each ev line is appended to verdicts, for the observer once the message is stored.
func (s *Service) evidenceNotes(ctx context.Context, room string, d *draft, maxChecks int, verdicts []string) (notes, _ []string) {
	if d.conv == nil {
		return nil, verdicts
	}
	// The checks share one deadline, within the request's own: none starts after it, and a
	// check that runs git (a commit) is cut off at it (evidence.Resolver.ResolveBefore).
	deadline := time.Now().Add(evidenceBudget)
	checks := 0
	var few [4]evidencePair
	pairs := pairEvidence(d.conv, few[:0])
	for i := range pairs {
		p := &pairs[i]
		var lb [64]byte
		lbl := appendLabel(lb[:0], p.done) // string(lbl) in a concatenation makes no copy
		if len(p.evs) == 0 {
			notes = append(notes, "! done"+string(lbl)+" unproven: no ev line under it")
			continue
		}
		commitOnly := true
		for _, ev := range p.evs {
			var v evidence.Verdict
			switch {
			case checks >= maxChecks:
				v = evidence.Verdict{Status: evidence.Unverified, Ref: evidence.Parse(ev.Text),
					Detail: fmt.Sprintf("too many evidence lines (the room checks at most %d per message)", maxChecks)}
			case ctx.Err() != nil || !time.Now().Before(deadline):
				v = evidence.Verdict{Status: evidence.Unverified, Ref: evidence.Parse(ev.Text),
					Detail: fmt.Sprintf("not checked: the evidence checks of one message stop after %s", evidenceBudget)}
			default:
				checks++
				v = s.ev.ResolveBefore(ctx, deadline, room, ev.Text)
			}
			verdicts = append(verdicts, v.Status)
			if v.Detail == "" { // "! ev<label> " + v.String(), in one copy
				notes = append(notes, "! ev"+string(lbl)+" "+v.Status)
			} else {
				notes = append(notes, "! ev"+string(lbl)+" "+v.Status+": "+v.Detail)
			}
			if v.Ref.Kind != evidence.KindCommit {
				commitOnly = false
			}
		}
		if commitOnly && evidence.AboutTests(p.done.Text) {
			notes = append(notes, "! claim"+string(lbl)+" unproven: a commit proves code exists, not that tests ran; cite run <id>")
		}
	}
	return notes, verdicts
}

// doneVerdict reads a done's verdict back from its message's frozen notes, so the state record
// says exactly what history says.
func doneVerdict(notes []string, done convention.Line) string {
	lbl := label(done)
	verdict := ""
	for _, n := range notes {
		switch {
		case strings.HasPrefix(n, "! claim"+lbl+" "):
			return strings.TrimPrefix(n, "! claim"+lbl+" ")
		case strings.HasPrefix(n, "! done"+lbl+" "):
			return strings.TrimPrefix(n, "! done"+lbl+" ")
		case strings.HasPrefix(n, "! ev"+lbl+" "):
			v := strings.TrimPrefix(n, "! ev"+lbl+" ")
			// With several ev lines, a failure outweighs everything and a proof outweighs
			// what could not be checked.
			switch {
			case strings.HasPrefix(v, evidence.Failed):
				verdict = v
			case strings.HasPrefix(v, evidence.Verified) && !strings.HasPrefix(verdict, evidence.Failed):
				verdict = v
			case verdict == "":
				verdict = v
			}
		}
	}
	if verdict == "" {
		return "unproven: no verdict recorded"
	}
	return verdict
}

func pluralWord(n int, w string) string {
	if n == 1 {
		return w
	}
	return w + "s"
}
