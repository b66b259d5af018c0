package aacp

import (
	"slices"
	"sort"
	"strings"

	"github.com/parleyhq/parley/convention"
	"github.com/parleyhq/parley/internal/spell"
)

// Options configure Validate.
type Options struct {
	// RequireTo makes a packet without a non-empty to: an error. A room sets it: a packet
	// that names no addressee is acted on by nobody.
	RequireTo bool
	// Roster, when non-nil, is the set of seats to: may name ("all" is always allowed).
	Roster []string
	// Domains are extra DOM values to recognise (section 12 lets implementors add them).
	Domains []string
}

// Validate checks a parsed packet against section 7 (and section 14 for sensitive data) and
// returns errors and warnings; see the package documentation for which is which and why.
func Validate(p *Packet, opt Options) []Diagnostic {
	var diags []Diagnostic
	add := func(sev string, line, col int, code, msg, fix string) {
		diags = append(diags, Diagnostic{Line: max(line, 1), Col: max(col, 1), Severity: sev, Code: code, Message: msg, Fix: fix})
	}
	errAt := func(line, col int, code, msg, fix string) { add(convention.SeverityError, line, col, code, msg, fix) }
	warnAt := func(line, col int, code, msg, fix string) { add(convention.SeverityWarning, line, col, code, msg, fix) }

	// TASK: required and recognised (an error either way; see the package doc).
	switch {
	case p.Task == "":
		errAt(p.taskPos.line, p.taskPos.col, "task", "the packet has no TASK: field 0 is one of "+strings.Join(Tasks, " "), "")
	case !slices.Contains(Tasks, p.Task):
		fix := ""
		if up := strings.ToUpper(p.Task); slices.Contains(Tasks, up) {
			fix = up
		} else if near := nearest(up, Tasks); near != "" {
			fix = near
		}
		errAt(p.taskPos.line, p.taskPos.col, "task", "unknown TASK "+quote(p.Task)+": a receiver cannot act on a verb it does not know (known: "+strings.Join(Tasks, " ")+")", fix)
	}

	// DOM: required; an unknown but well-formed one is a private domain (section 12).
	domains := append(append([]string(nil), Domains...), opt.Domains...)
	switch {
	case p.domReported:
	case p.Dom == "":
		errAt(p.domPos.line, p.domPos.col, "dom", "the packet has no DOM: field 1 is one of "+strings.Join(Domains, " "), "")
	case slices.Contains(domains, p.Dom):
	case slices.Contains(domains, strings.ToUpper(p.Dom)):
		errAt(p.domPos.line, p.domPos.col, "dom", "DOM values are upper case: "+strings.ToUpper(p.Dom), strings.ToUpper(p.Dom))
	case wellFormedDom(p.Dom):
		warnAt(p.domPos.line, p.domPos.col, "dom", "unrecognised DOM "+quote(p.Dom)+" (known: "+strings.Join(domains, " ")+"): fine if your organisation defines it", "")
	default:
		errAt(p.domPos.line, p.domPos.col, "dom", quote(p.Dom)+" cannot be a DOM: DOM values are upper-case words such as "+strings.Join(Domains, " "), "")
	}

	// Required named fields.
	if v, ok := p.Get("return"); !ok {
		errAt(p.end.line, p.end.col, "return", "the packet has no return: field, so the receiver does not know where to send the result", "return:<seat>")
	} else if strings.TrimSpace(v) == "" {
		f := p.field("return")
		errAt(f.Line, f.Col, "return", "return: is empty: name the seat that gets the result", "return:<seat>")
	}
	if v, ok := p.Get("aacp"); !ok {
		errAt(p.end.line, p.end.col, "aacp", "the packet has no aacp: field: every packet names its protocol version", "aacp:"+Version)
	} else if strings.TrimSpace(v) == "" {
		f := p.field("aacp")
		errAt(f.Line, f.Col, "aacp", "aacp: is empty: name the protocol version", "aacp:"+Version)
	} else if v != Version {
		f := p.field("aacp")
		warnAt(f.Line, f.Col, "version", "aacp:"+v+" but this validator implements "+Version+": the packet is read anyway, but fields may mean something else", "")
	}

	// Priority.
	if v, ok := p.Get("p"); !ok {
		warnAt(p.end.line, p.end.col, "priority", "no p: priority: receivers will guess one", "p:2")
	} else if v != "1" && v != "2" && v != "3" {
		f := p.field("p")
		warnAt(f.Line, f.Col, "priority", "p:"+v+" is not a priority: p is 1, 2 or 3", "")
	}

	// Field pairs the specification asks for.
	if _, ok := p.Get("sentiment"); ok {
		if _, ok := p.Get("tone"); !ok {
			f := p.field("sentiment")
			warnAt(f.Line, f.Col, "tone", "sentiment: without tone:", "add tone:<tone>")
		}
	}
	if _, ok := p.Get("ltv"); ok {
		if _, ok := p.Get("ccy"); !ok {
			f := p.field("ltv")
			warnAt(f.Line, f.Col, "ccy", "ltv: without ccy: a lifetime value with no currency", "add ccy:<currency code>")
		}
	}

	// Unknown, duplicated and spaced fields.
	seen := map[string]int{}
	known := append(append([]string(nil), CoreFields...), ExtendedFields...)
	for _, f := range p.Fields {
		if first, dup := seen[f.Key]; dup {
			warnAt(f.Line, f.Col, "duplicate-field", f.Key+": appears twice (first at column "+itoa(first)+"): readers may take either value", "")
		} else {
			seen[f.Key] = f.Col
		}
		if _, ok := knownField[f.Key]; !ok && !strings.Contains(f.Key, ".") {
			fix := ""
			if near := nearest(f.Key, known); near != "" {
				fix = near + ":" + f.Value
			}
			warnAt(f.Line, f.Col, "unknown-field", "unknown field "+quote(f.Key)+": receivers may ignore it (an organisation-private field takes a namespace, e.g. acme."+f.Key+")", fix)
		}
		if strings.ContainsAny(f.Value, " \t") {
			warnAt(f.Line, f.Col+len(f.Key)+1, "spaces", "a value with spaces: v1.1 writes them as '_' so every reader splits the packet the same way", f.Key+":"+strings.Join(strings.Fields(f.Value), "_"))
		}
		if strings.TrimSpace(f.Value) == "" && f.Key != "return" && f.Key != "aacp" {
			warnAt(f.Line, f.Col, "empty-value", f.Key+": has no value", "")
		}
	}

	// Sensitive data (section 14).
	for _, f := range p.Fields {
		if why, ok := Sensitive(f.Key, f.Value); ok {
			errAt(f.Line, f.Col, "sensitive", f.Key+": carries "+why+": sensitive data must not travel in a packet; pass a reference that resolves through an authenticated data layer", "data_ptr:<reference>")
		}
	}

	// Addressing in a room.
	to := Addressees(p)
	if opt.RequireTo && len(to) == 0 {
		errAt(p.end.line, p.end.col, "no-to", "the packet names no addressee: in a room a packet needs to:<seat> (several comma-separated, or all), or nobody acts on it", "to:<seat>")
	}
	if opt.Roster != nil && len(to) > 0 {
		in := map[string]bool{}
		for _, s := range opt.Roster {
			in[s] = true
		}
		roster := append([]string(nil), opt.Roster...)
		sort.Strings(roster)
		f := p.field("to")
		for _, s := range to {
			if s == "all" || in[s] {
				continue
			}
			errAt(f.Line, f.Col, "unknown-seat", quote(s)+" does not sit in this room (seats: "+strings.Join(roster, ", ")+")", nearest(s, roster))
		}
	}
	return diags
}

// Check parses src and validates it, returning every diagnostic sorted by position.
func Check(src string, opt Options) (*Packet, []Diagnostic) {
	p, diags := Parse(src)
	diags = append(diags, Validate(p, opt)...)
	convention.SortDiagnostics(diags)
	return p, diags
}

// field returns the first field named key (zero Field when absent).
func (p *Packet) field(key string) Field {
	for _, f := range p.Fields {
		if f.Key == key {
			return f
		}
	}
	return Field{Line: p.end.line, Col: p.end.col}
}

func wellFormedDom(s string) bool {
	if s == "" || len(s) > 32 || !(s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// nearest returns the name closest to s by edit distance when it is a likely typo.
func nearest(s string, names []string) string {
	if len(s) < 3 || len(s) > 64 {
		return "" // one- and two-letter keys are close to everything; long ones to nothing
	}
	return spell.Nearest(s, names)
}
