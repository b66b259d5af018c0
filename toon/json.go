package toon

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Member is one key and its value inside an Object.
type Member struct {
	Key   string
	Value any
}

// Object is a JSON object whose members keep the order they were written in. TOON emits
// fields in encounter order, so a Go map (whose order is random) cannot carry it.
type Object []Member

// Get returns the value of the first member named key.
func (o Object) Get(key string) (any, bool) {
	for _, m := range o {
		if m.Key == key {
			return m.Value, true
		}
	}
	return nil, false
}

// maxDepth bounds nesting in ParseJSON and Encode. It keeps a hostile or cyclic input from
// exhausting the stack; real messages nest a handful of levels.
const maxDepth = 1000

// ParseJSON decodes one JSON value into the ordered representation Encode reads best:
// objects become Object (source key order kept), arrays []any, numbers json.Number (the
// digits exactly as written), strings string, booleans bool and null nil.
//
// Unlike encoding/json it rejects an object that repeats a key: which of the two values
// was meant is unknowable, and silently keeping one would lose data. Errors carry the byte
// offset where the problem was found.
func ParseJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	p := &jsonParser{dec: dec}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("toon: json: offset %d: data after the top-level value", dec.InputOffset())
	}
	return v, nil
}

type jsonParser struct {
	dec *json.Decoder
}

func (p *jsonParser) errorf(format string, args ...any) error {
	return fmt.Errorf("toon: json: offset %d: %s", p.dec.InputOffset(), fmt.Sprintf(format, args...))
}

func (p *jsonParser) token() (json.Token, error) {
	tok, err := p.dec.Token()
	if errors.Is(err, io.EOF) {
		return nil, p.errorf("unexpected end of input")
	}
	if err != nil {
		return nil, fmt.Errorf("toon: json: %w", err)
	}
	return tok, nil
}

func (p *jsonParser) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, p.errorf("nesting deeper than %d", maxDepth)
	}
	tok, err := p.token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return p.object(depth)
		case '[':
			return p.array(depth)
		}
		return nil, p.errorf("unexpected %q", rune(t))
	default:
		// string, json.Number, bool or nil: already in the form we keep.
		return t, nil
	}
}

func (p *jsonParser) object(depth int) (Object, error) {
	obj := Object{}
	seen := map[string]bool{}
	for p.dec.More() {
		tok, err := p.token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, p.errorf("object key is not a string")
		}
		if seen[key] {
			return nil, p.errorf("duplicate key %q", key)
		}
		seen[key] = true
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		obj = append(obj, Member{Key: key, Value: v})
	}
	if _, err := p.token(); err != nil { // the closing brace
		return nil, err
	}
	return obj, nil
}

func (p *jsonParser) array(depth int) ([]any, error) {
	arr := []any{}
	for p.dec.More() {
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
	}
	if _, err := p.token(); err != nil { // the closing bracket
		return nil, err
	}
	return arr, nil
}
