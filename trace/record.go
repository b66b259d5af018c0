package trace

import (
	"errors"
	"fmt"
)

// Kind is what a handoff does.
type Kind string

// The record kinds. Adapters map every source message onto one of these.
const (
	KindPlan       Kind = "plan"
	KindMessage    Kind = "message"
	KindToolCall   Kind = "tool_call"
	KindToolResult Kind = "tool_result"
	KindStatus     Kind = "status"
	KindArtifact   Kind = "artifact"
	KindReview     Kind = "review"
	KindError      Kind = "error"
	KindFinal      Kind = "final"
)

// Kinds lists every kind in a fixed order.
var Kinds = []Kind{KindPlan, KindMessage, KindToolCall, KindToolResult, KindStatus, KindArtifact, KindReview, KindError, KindFinal}

// Record is one handoff in canonical form. String fields are absent from the canonical
// JSON when empty; Args, Result and Meta are absent when nil. Meta holds every source field
// that has no place of its own, under its source name, so nothing of a message is dropped.
type Record struct {
	Kind   Kind
	From   string
	To     string
	Text   string
	Tool   string
	CallID string
	Args   *Value // any JSON value (adapters keep argument strings as strings)
	Result *Value // any JSON value
	Meta   *Value // a JSON object
}

// Session is one trajectory: its records in the order they were handed off.
type Session struct {
	ID      string
	Records []Record
}

// Value returns the record as a JSON object (members in canonical order).
func (r *Record) Value() Value {
	v := Value{Kind: Object, Members: make([]Member, 0, 9)}
	add := func(k string, s string) {
		if s != "" {
			v.Members = append(v.Members, Member{Key: k, Value: StringValue(s)})
		}
	}
	addV := func(k string, x *Value) {
		if x != nil {
			v.Members = append(v.Members, Member{Key: k, Value: *x})
		}
	}
	addV("args", r.Args)
	add("call_id", r.CallID)
	add("from", r.From)
	add("kind", string(r.Kind))
	addV("meta", r.Meta)
	addV("result", r.Result)
	add("text", r.Text)
	add("to", r.To)
	add("tool", r.Tool)
	return v
}

// Canonical returns the record's canonical JSON.
func (r *Record) Canonical() []byte {
	v := r.Value()
	return AppendCanonical(nil, &v)
}

// RecordFromValue reads a record back from its JSON object. Unknown names are an error:
// a record holds the nine canonical fields and nothing else.
func RecordFromValue(v *Value) (Record, error) {
	var r Record
	if v.Kind != Object {
		return r, errors.New("trace: a record must be a JSON object")
	}
	for i := range v.Members {
		m := &v.Members[i]
		str := func(dst *string) error {
			if m.Value.Kind != String {
				return fmt.Errorf("trace: record field %q must be a string", m.Key)
			}
			*dst = m.Value.Str
			return nil
		}
		var err error
		switch m.Key {
		case "kind":
			var s string
			err = str(&s)
			r.Kind = Kind(s)
		case "from":
			err = str(&r.From)
		case "to":
			err = str(&r.To)
		case "text":
			err = str(&r.Text)
		case "tool":
			err = str(&r.Tool)
		case "call_id":
			err = str(&r.CallID)
		case "args":
			x := m.Value
			r.Args = &x
		case "result":
			x := m.Value
			r.Result = &x
		case "meta":
			if m.Value.Kind != Object {
				return r, errors.New("trace: record field \"meta\" must be an object")
			}
			x := m.Value
			r.Meta = &x
		default:
			return r, fmt.Errorf("trace: unknown record field %q", m.Key)
		}
		if err != nil {
			return r, err
		}
	}
	if r.Kind == "" {
		return r, errors.New("trace: record has no kind")
	}
	return r, nil
}

// SessionValue returns {"id":…,"records":[…]}, the line format of `parley a2c normalize`.
func (s *Session) Value() Value {
	recs := Value{Kind: Array, Items: make([]Value, len(s.Records))}
	for i := range s.Records {
		recs.Items[i] = s.Records[i].Value()
	}
	return Value{Kind: Object, Members: []Member{{Key: "id", Value: StringValue(s.ID)}, {Key: "records", Value: recs}}}
}

// SessionFromValue reads a session line back.
func SessionFromValue(v *Value) (Session, error) {
	var s Session
	id, ok := v.Get("id")
	if ok && id.Kind == String {
		s.ID = id.Str
	}
	recs, ok := v.Get("records")
	if !ok || recs.Kind != Array {
		return s, errors.New("trace: a session line needs a \"records\" array")
	}
	for i := range recs.Items {
		r, err := RecordFromValue(&recs.Items[i])
		if err != nil {
			return s, fmt.Errorf("record %d: %w", i, err)
		}
		s.Records = append(s.Records, r)
	}
	return s, nil
}

// metaBuilder collects source fields that have no canonical place.
type metaBuilder struct{ v Value }

func (m *metaBuilder) add(key string, v Value) {
	if m.v.Kind != Object {
		m.v = Value{Kind: Object}
	}
	m.v.Members = append(m.v.Members, Member{Key: key, Value: v})
}

// value returns the meta object, or nil when nothing was added.
func (m *metaBuilder) value() *Value {
	if m.v.Kind != Object {
		return nil
	}
	v := m.v
	return &v
}
