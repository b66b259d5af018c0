package aacp

import (
	"strings"
	"unicode/utf8"

	"github.com/parleyhq/parley/convention"
	"github.com/parleyhq/parley/diag"
)

// Version is the protocol version this package implements.
const Version = "1.1"

// Diagnostic is package diag's, the type the convention's parser and the room server use
// too, so that one linter prints both.
type Diagnostic = diag.Diagnostic

// Tasks are the recognised TASK values.
var Tasks = []string{"FETCH", "PROC", "FLAG", "RESOLVE", "LOG", "SEND", "BUILD", "MERGE", "CALC", "REPORT", "ACK", "SYNC"}

// Domains are the recognised DOM values.
var Domains = []string{"HR", "FIN", "SALES", "LEGAL", "IT", "CS", "MKT"}

// CoreFields are the core named fields; return is required.
var CoreFields = []string{"return", "aacp", "p", "res", "period", "filter", "fields", "fmt"}

// ExtendedFields are the extended named fields the reference SDKs know.
var ExtendedFields = []string{"src", "src_prev", "rules", "validate", "tmpl", "data_ptr", "amt", "ccy", "sup", "match", "terms", "type", "party", "clause", "issue", "risk", "block", "flags", "req", "highlight", "status", "to", "subj", "att", "flag_msg", "tone", "sentiment", "actor", "chain", "prog", "ltv", "loyalty", "urgency"}

var knownField = func() map[string]int {
	m := map[string]int{}
	for i, k := range CoreFields {
		m[k] = i
	}
	for i, k := range ExtendedFields {
		m[k] = len(CoreFields) + i
	}
	return m
}()

// Field is one named field. Line and Col locate its key in the source (1-based, bytes); they
// are 0 in a packet that was built rather than parsed.
type Field struct {
	Key   string
	Value string
	Line  int
	Col   int
}

// Packet is one AACP packet.
type Packet struct {
	Task   string
	Dom    string
	Fields []Field // named fields in the order written

	taskPos, domPos pos
	domReported     bool // Parse already said the DOM is missing
	end             pos  // just past the last field, for diagnostics about what is missing
}

type pos struct{ line, col int }

// Get returns the value of the first field named key.
func (p *Packet) Get(key string) (string, bool) {
	for _, f := range p.Fields {
		if f.Key == key {
			return f.Value, true
		}
	}
	return "", false
}

// Addressees returns the seats named by the packet's to: field (comma-separated), or nil
// when it has none. "all" is returned as written.
func Addressees(p *Packet) []string {
	v, ok := p.Get("to")
	if !ok {
		return nil
	}
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// String renders the packet canonically: TASK|DOM|key:value|…, on one line, no spaces
// around separators. For a packet that parsed without errors, Parse(p.String()) gives back
// the same packet.
func (p *Packet) String() string {
	var b strings.Builder
	b.WriteString(p.Task)
	b.WriteByte('|')
	b.WriteString(p.Dom)
	for _, f := range p.Fields {
		b.WriteByte('|')
		b.WriteString(f.Key)
		b.WriteByte(':')
		b.WriteString(f.Value)
	}
	return b.String()
}

// Looks reports whether src looks like an AACP packet: its first non-blank line starts with
// an upper-case word and a '|', and holds another '|'. It is how a room or the linter tells a
// packet from a convention message or prose before parsing it.
func Looks(src string) bool {
	line := ""
	for _, l := range strings.Split(src, "\n") {
		if strings.TrimSpace(l) != "" {
			line = strings.TrimSpace(strings.TrimPrefix(l, "\uFEFF"))
			break
		}
	}
	first, rest, ok := strings.Cut(line, "|")
	if !ok || len(first) < 2 || len(first) > 16 {
		return false
	}
	for i := 0; i < len(first); i++ {
		c := first[i]
		if !(c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '_')) {
			return false
		}
	}
	return strings.Contains(rest, "|") || strings.HasSuffix(strings.TrimSpace(rest), "|") || rest != "" && !strings.Contains(rest, " ")
}

// Parse reads one packet. Lines broken right after a '|' are joined, as the specification
// wraps long packets for display. Parse never fails outright: the returned packet holds what
// could be read, and the diagnostics are errors about the packet's grammar (an empty slot, an
// unnamed field, a second line) and warnings about spaces around separators.
func Parse(src string) (*Packet, []Diagnostic) {
	p := &Packet{}
	var diags []Diagnostic
	errAt := func(line, col int, code, msg, fix string) {
		diags = append(diags, Diagnostic{Line: line, Col: max(col, 1), Severity: convention.SeverityError, Code: code, Message: msg, Fix: fix})
	}
	warnAt := func(line, col int, code, msg, fix string) {
		diags = append(diags, Diagnostic{Line: line, Col: max(col, 1), Severity: convention.SeverityWarning, Code: code, Message: msg, Fix: fix})
	}
	if !utf8.ValidString(src) {
		errAt(1, 1, "utf8", "the packet is not valid UTF-8", "")
		src = strings.ToValidUTF8(src, "\uFFFD")
	}
	src = strings.TrimPrefix(src, "\uFEFF")

	// Gather the packet's lines: the first non-blank one, and each following one that
	// continues it (the previous line ends with '|' or this one starts with one).
	type span struct {
		text      string
		line, col int
	}
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	var parts []span
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if len(parts) > 0 {
			prev := strings.TrimRight(parts[len(parts)-1].text, " \t")
			if !strings.HasSuffix(prev, "|") && !strings.HasPrefix(strings.TrimLeft(l, " \t"), "|") {
				errAt(i+1, 1, "multiline", "a packet is one line: line "+itoa(i+1)+" is not part of it (a packet may wrap only at a '|')", "")
				break
			}
			parts[len(parts)-1].text = prev
			lead := len(l) - len(strings.TrimLeft(l, " \t"))
			parts = append(parts, span{l[lead:], i + 1, lead + 1})
			continue
		}
		parts = append(parts, span{l, i + 1, 1})
	}
	// Split on '|', remembering where each field starts. A field continues across a wrap
	// only when the wrap is at its very start or end, so joining its pieces is exact.
	var fields []span
	var cur *span
	for _, pt := range parts {
		pieces := strings.Split(pt.text, "|")
		off := 0
		for j, piece := range pieces {
			if j > 0 {
				fields = append(fields, *cur)
				cur = nil
			}
			if cur == nil || cur.text == "" && piece != "" {
				// A field's position is where its text starts, on the next line when the
				// packet wraps right after a '|'.
				cur = &span{line: pt.line, col: pt.col + off}
			}
			cur.text += piece
			off += len(piece) + 1
		}
	}
	if cur != nil {
		fields = append(fields, *cur)
	}
	if len(parts) > 0 {
		last := parts[len(parts)-1]
		p.end = pos{last.line, last.col + len(last.text)}
	} else {
		p.end = pos{1, 1}
	}
	if len(fields) == 0 {
		fields = []span{{"", 1, 1}}
	}

	if len(fields) == 1 && strings.TrimSpace(fields[0].text) == "" {
		errAt(1, 1, "empty", "the packet is empty", "TASK|DOM|return:<seat>|p:1|aacp:1.1")
		return p, diags
	}
	spaced := false
	trim := func(s span) span {
		t := strings.TrimSpace(s.text)
		if t != s.text {
			spaced = true
			s.col += len(s.text) - len(strings.TrimLeft(s.text, " \t"))
			s.text = t
		}
		return s
	}
	t := trim(fields[0])
	p.Task, p.taskPos = t.text, pos{t.line, t.col}
	if len(fields) < 2 {
		errAt(p.end.line, p.end.col, "dom", "the packet has no DOM: it starts TASK|DOM|", "")
		p.domReported = true
		return p, diags
	}
	d := trim(fields[1])
	if strings.Contains(d.text, ":") {
		// The DOM slot holds a named field: the DOM was left out.
		errAt(d.line, d.col, "dom", "field 1 must be the DOM, not the named field "+quote(d.text), "")
		p.domReported = true
		fields = append(fields[:1], append([]span{{"", d.line, d.col}}, fields[1:]...)...)
	} else {
		p.Dom, p.domPos = d.text, pos{d.line, d.col}
	}
	for i, f := range fields[2:] {
		f = trim(f)
		if f.text == "" {
			fix := ""
			if i == len(fields)-3 {
				fix = "drop the trailing |"
			}
			errAt(f.line, f.col, "empty-field", "an empty field: v1.1 packets have no empty slots", fix)
			continue
		}
		key, value, ok := strings.Cut(f.text, ":")
		if !ok {
			errAt(f.line, f.col, "unnamed-field", "after TASK and DOM every field is named key:value, not "+quote(f.text), "")
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !validKey(key) {
			errAt(f.line, f.col, "field-key", "field key "+quote(key)+" is not a key: keys are letters, digits, '_', '-' and '.', starting with a letter", "")
			continue
		}
		p.Fields = append(p.Fields, Field{Key: key, Value: value, Line: f.line, Col: f.col})
	}
	if spaced {
		warnAt(p.taskPos.line, p.taskPos.col, "spacing", "spaces around '|' cost tokens and are not part of any value", p.String())
	}
	return p, diags
}

// validKey reports whether k can be a field key: lower-case letters, digits, '_', '-' and '.'
// (the last two for organisation-private namespaces), starting with a letter.
func validKey(k string) bool {
	if k == "" || len(k) > 64 || !(k[0] >= 'a' && k[0] <= 'z' || k[0] >= 'A' && k[0] <= 'Z') {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

func quote(s string) string { return "`" + s + "`" }

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}
