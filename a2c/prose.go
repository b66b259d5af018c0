// Prose lines: the compact profile for sessions of prose handoffs (Options.Prose).
//
// The wording of proseNote was chosen on synthetic ReAct seed 1 (60 sessions, full cost):
// 36 tokens ("one a line: … tool_call: tool=to, text=args; …") 17,771; 30 tokens (this one)
// 17,411; 29 tokens without "JSON" 17,351 (kept the word: it says what comes out).

package a2c

import (
	"strings"
	"unicode/utf8"

	"github.com/parleyhq/parley/trace"
)

// proseNote is the whole decode explanation of a prose session (the splice sentence
// follows when the session splices). A reader understands "kind from>to: text" almost
// unaided; the sentence adds where the tool records keep their tool and their JSON.
const proseNote = "JSON records: kind from>to call_id: text (args in tool_call, tool=to; result in tool_result, tool=from)."

// prose is one record as a prose line holds it.
type prose struct {
	kind, from, to, call, text string
	hasTo                      bool
}

// proseAtom reports whether s can stand in the head of a prose line (kind, from, to or
// call_id): non-empty, valid UTF-8, none of space > : \ ^ ? and no control character.
func proseAtom(s string) bool {
	if s == "" || !utf8.ValidString(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c == 0x7f || c == ' ' || c == '>' || c == ':' || c == '\\':
			return false
		}
	}
	return !strings.ContainsAny(s, string([]byte{spliceOpen, spliceLong}))
}

// proseText reports whether s can be the text of a prose line: valid UTF-8 without
// control characters (so without newlines).
func proseText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

// proseOf returns the prose form of a record, or false when the record is not one of the
// three shapes a prose line holds: {kind, from, to?, text} for a kind other than tool_call
// and tool_result; {kind: tool_call, from, to, tool = to, call_id, args}; {kind:
// tool_result, from, to, tool = from, call_id, result}; every value a string, no other
// member, no name twice.
func proseOf(rec *trace.Value) (prose, bool) {
	var p prose
	if rec.Kind != trace.Object {
		return p, false
	}
	got := map[string]string{}
	for i := range rec.Members {
		m := &rec.Members[i]
		if _, dup := got[m.Key]; dup || m.Value.Kind != trace.String {
			return p, false
		}
		got[m.Key] = m.Value.Str
	}
	p.kind, p.from = got["kind"], got["from"]
	p.to, p.hasTo = got["to"]
	p.call = got["call_id"]
	// A kind that starts with the magic would read as the next session's header.
	if !proseAtom(p.kind) || strings.HasPrefix(p.kind, Magic) || !proseAtom(p.from) || (p.hasTo && !proseAtom(p.to)) {
		return p, false
	}
	want := 3 // kind, from, text
	if p.hasTo {
		want++
	}
	switch p.kind {
	case "tool_call", "tool_result":
		tool, ok := got["tool"]
		body := "args"
		side := p.to
		if p.kind == "tool_result" {
			body, side = "result", p.from
		}
		text, okText := got[body]
		if !p.hasTo || !ok || tool != side || !proseAtom(p.call) || !okText || len(got) != 6 {
			return p, false
		}
		p.text = text
	default:
		text, ok := got["text"]
		if !ok || len(got) != want {
			return p, false
		}
		p.text = text
	}
	return p, proseText(p.text)
}

// ProseFits reports whether every record of a session has a prose form (Options.Prose).
func ProseFits(recs []trace.Value) bool {
	if len(recs) == 0 {
		return false
	}
	for i := range recs {
		if _, ok := proseOf(&recs[i]); !ok {
			return false
		}
	}
	return true
}

// appendProse writes a record's prose line: kind, a space, from, >to when there is a to,
// a space and the call_id for tool records, then ": " and the text.
func appendProse(dst []byte, p prose) []byte {
	dst = append(dst, p.kind...)
	dst = append(dst, ' ')
	dst = append(dst, p.from...)
	if p.hasTo {
		dst = append(dst, '>')
		dst = append(dst, p.to...)
	}
	if p.kind == "tool_call" || p.kind == "tool_result" {
		dst = append(dst, ' ')
		dst = append(dst, p.call...)
	}
	dst = append(dst, ':', ' ')
	return append(dst, p.text...)
}

// proseLine reads an expanded prose line.
func (r *reader) proseLine() (trace.Value, error) {
	s := r.s
	sp := strings.IndexByte(s, ' ')
	colon := strings.Index(s, ": ")
	if sp <= 0 || colon < sp {
		return trace.Value{}, r.errorf("a prose line is kind, a space, from[>to][ call_id], \": \" and the text")
	}
	kind, head, text := s[:sp], s[sp+1:colon], s[colon+2:]
	fromTo, call, hasCall := strings.Cut(head, " ")
	from, to, hasTo := strings.Cut(fromTo, ">")
	tool := kind == "tool_call" || kind == "tool_result"
	switch {
	case !proseAtom(kind) || !proseAtom(from) || (hasTo && !proseAtom(to)):
		r.pos = sp
		return trace.Value{}, r.errorf("malformed kind, from or to in a prose line")
	case tool && (!hasCall || !hasTo || !proseAtom(call)):
		r.pos = sp
		return trace.Value{}, r.errorf("a prose %s line needs from>to and a call_id", kind)
	case !tool && hasCall:
		r.pos = sp
		return trace.Value{}, r.errorf("only tool_call and tool_result prose lines carry a call_id")
	case !proseText(text):
		r.pos = colon + 2
		return trace.Value{}, r.errorf("control character in a prose line's text")
	}
	str := trace.StringValue
	rec := trace.Value{Kind: trace.Object, Members: []trace.Member{{Key: "kind", Value: str(kind)}, {Key: "from", Value: str(from)}}}
	if hasTo {
		rec.Members = append(rec.Members, trace.Member{Key: "to", Value: str(to)})
	}
	switch kind {
	case "tool_call":
		rec.Members = append(rec.Members, trace.Member{Key: "tool", Value: str(to)}, trace.Member{Key: "call_id", Value: str(call)}, trace.Member{Key: "args", Value: str(text)})
	case "tool_result":
		rec.Members = append(rec.Members, trace.Member{Key: "tool", Value: str(from)}, trace.Member{Key: "call_id", Value: str(call)}, trace.Member{Key: "result", Value: str(text)})
	default:
		rec.Members = append(rec.Members, trace.Member{Key: "text", Value: str(text)})
	}
	r.pos = len(s)
	return rec, nil
}
