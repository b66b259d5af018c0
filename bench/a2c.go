package bench

import (
	"bytes"
	"fmt"
	"reflect"

	"github.com/parleyhq/parley/a2c"
	"github.com/parleyhq/parley/trace"
)

// a2cOptions are the codec's default options (a2c.Default) without a tokenizer: the study
// renders each message once and counts the same text under every encoding, so the encoder
// may not tune its splices to one of them. On the fixtures this differs from the
// token-aligned default (`parley a2c encode`) only on p1, where two short splices save 5
// payload tokens and cost 14 more tokens of instructions.
var a2cOptions = a2c.Default(nil)

// a2cFeatures are the parts of a2c/2 that a one-record session of a plain JSON message uses
// under a2cOptions: the positional schema, the kind letter m and bare keys and strings.
// Every fixture uses exactly these; a message that needs more is an error, not a grammar
// charged short.
// Fields is 8: the records fill meta, the last slot.
var a2cFeatures = a2c.Features{Schema: true, Bare: true, Kinds: map[byte]bool{'m': true}, Fields: 8}

// A2CGrammar is what a reader must hold to read the study's a2c messages: the decode
// instructions the codec ships with each of their sessions (a2c.Instructions of the
// features they use).
var A2CGrammar = a2c.Instructions(a2cFeatures, false)

// a2cRecord maps a study message onto a trace record the way the trace adapters map a chat
// message: kind "message"; from and to from the message's own "from" and "to" (when they
// are strings); every other member, in source order, in meta under its own name ("every
// source field with no place of its own"). There is no text, tool or call: the message is
// structured data, and args/result belong to tool calls.
func a2cRecord(m Message) (trace.Record, trace.Value, error) {
	src, err := m.File("message.json")
	if err != nil {
		return trace.Record{}, trace.Value{}, err
	}
	v, err := trace.ParseJSON([]byte(src))
	if err != nil {
		return trace.Record{}, trace.Value{}, fmt.Errorf("bench: %s/message.json: %w", m.Name, err)
	}
	if v.Kind != trace.Object {
		return trace.Record{}, trace.Value{}, fmt.Errorf("bench: %s/message.json is not a JSON object", m.Name)
	}
	rec := trace.Record{Kind: trace.KindMessage}
	meta := trace.Value{Kind: trace.Object}
	for _, mb := range v.Members {
		switch {
		case mb.Key == "from" && mb.Value.Kind == trace.String && rec.From == "" && mb.Value.Str != "":
			rec.From = mb.Value.Str
		case mb.Key == "to" && mb.Value.Kind == trace.String && rec.To == "" && mb.Value.Str != "":
			rec.To = mb.Value.Str
		default:
			meta.Members = append(meta.Members, mb)
		}
	}
	if len(meta.Members) > 0 {
		rec.Meta = &meta
	}
	return rec, v, nil
}

// a2cMessage rebuilds the message object from a decoded record: the inverse of a2cRecord up
// to member order, which canonical JSON does not see.
func a2cMessage(v *trace.Value) (trace.Value, error) {
	rec, err := trace.RecordFromValue(v)
	if err != nil {
		return trace.Value{}, err
	}
	out := trace.Value{Kind: trace.Object}
	if rec.From != "" {
		out.Members = append(out.Members, trace.Member{Key: "from", Value: trace.StringValue(rec.From)})
	}
	if rec.To != "" {
		out.Members = append(out.Members, trace.Member{Key: "to", Value: trace.StringValue(rec.To)})
	}
	if rec.Meta != nil {
		out.Members = append(out.Members, rec.Meta.Members...)
	}
	return out, nil
}

// a2cSession encodes a study message as a one-record a2c/2 session (no id) and checks the
// round trip: the payload decodes to a message whose canonical JSON is message.json's.
func a2cSession(m Message) (*a2c.Encoded, error) {
	rec, src, err := a2cRecord(m)
	if err != nil {
		return nil, err
	}
	enc, err := a2c.EncodeSession("", []trace.Value{rec.Value()}, a2cOptions)
	if err != nil {
		return nil, fmt.Errorf("bench: %s as a2c: %w", m.Name, err)
	}
	_, recs, err := a2c.DecodeSession(enc.Payload(), nil)
	if err != nil {
		return nil, fmt.Errorf("bench: %s as a2c does not decode: %w", m.Name, err)
	}
	if len(recs) != 1 {
		return nil, fmt.Errorf("bench: %s as a2c decodes to %d records, want 1", m.Name, len(recs))
	}
	back, err := a2cMessage(&recs[0])
	if err != nil {
		return nil, fmt.Errorf("bench: %s as a2c: %w", m.Name, err)
	}
	if !bytes.Equal(trace.Canonical(&back), trace.Canonical(&src)) {
		return nil, fmt.Errorf("bench: %s as a2c does not round-trip:\n%s\n%s", m.Name, trace.Canonical(&back), trace.Canonical(&src))
	}
	if a2c.Instructions(unionFeatures(enc.Features, a2cFeatures), false) != A2CGrammar {
		return nil, fmt.Errorf("bench: %s as a2c needs decode instructions beyond the format's grammar:\n%s", m.Name, enc.Instructions)
	}
	return enc, nil
}

// unionFeatures returns the features of a and b together: every flag set in either, every
// letter of either map, the larger of each count. A session's features are within the grammar when adding them to
// a2cFeatures leaves its instructions unchanged.
func unionFeatures(a, b a2c.Features) a2c.Features {
	out := a2c.Features{}
	ov := reflect.ValueOf(&out).Elem()
	for _, in := range []a2c.Features{a, b} {
		iv := reflect.ValueOf(in)
		for i := range iv.NumField() {
			f := iv.Field(i)
			switch f.Kind() {
			case reflect.Bool:
				if f.Bool() {
					ov.Field(i).SetBool(true)
				}
			case reflect.Int:
				ov.Field(i).SetInt(max(ov.Field(i).Int(), f.Int()))
			case reflect.Map:
				if ov.Field(i).IsNil() {
					ov.Field(i).Set(reflect.MakeMap(f.Type()))
				}
				for _, k := range f.MapKeys() {
					ov.Field(i).SetMapIndex(k, f.MapIndex(k))
				}
			}
		}
	}
	return out
}

// a2cText is the payload of the message's one-record session, header line included; like
// every payload it ends with a newline.
func a2cText(m Message) (string, error) {
	enc, err := a2cSession(m)
	if err != nil {
		return "", err
	}
	return enc.Payload(), nil
}
