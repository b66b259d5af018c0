package aacp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"
)

// Encode builds a packet from a structured request, a JSON object:
//
//	{"task": "FETCH", "dom": "HR", "return": "HR-Agent", "p": 1,
//	 "res": "emp_salary", "period": "2024-08", "filter": {"status": "active"}, "fmt": "json"}
//
// task and dom fill the two positional slots; every other member becomes a named field (a
// "fields" object, if present, is merged in). Values are written as v1.1 expects: strings
// with spaces joined by '_', numbers exactly as written in the JSON, arrays comma-joined,
// objects as name=value pairs comma-joined in name order (an array inside an object is
// '+'-joined), null dropped. aacp:1.1 is added when absent.
//
// The field order is fixed, so the same request always gives the same bytes: return, p,
// aacp, to, then the core fields in the specification's order, then the extended fields in
// the SDKs' order, then any other keys sorted by name.
//
// Encode fails on what v1.1 cannot carry (a '|' or a line break in a value, a ',' inside a
// list item, nesting deeper than one object level). It does not validate: call Validate on
// the result to learn about missing or unknown fields.
func Encode(request []byte) (*Packet, error) {
	dec := json.NewDecoder(bytes.NewReader(request))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("the request must be a JSON object: %w", err)
	}
	if dec.More() {
		return nil, errors.New("the request must be one JSON object")
	}
	if obj == nil {
		return nil, errors.New("the request must be a JSON object, not null")
	}
	p := &Packet{}
	fields := map[string]any{}
	for k, v := range obj {
		switch strings.ToLower(k) {
		case "task":
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("task must be a string such as \"FETCH\"")
			}
			p.Task = s
		case "dom":
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("dom must be a string such as \"HR\"")
			}
			p.Dom = s
		case "fields":
			if m, ok := v.(map[string]any); ok {
				for fk, fv := range m {
					if _, dup := obj[fk]; dup {
						return nil, fmt.Errorf("field %q is given twice, at the top level and in fields", fk)
					}
					fields[fk] = fv
				}
				continue
			}
			fields[k] = v // a field literally called "fields" (the core field listing columns)
		default:
			fields[k] = v
		}
	}
	if p.Task == "" || p.Dom == "" {
		return nil, errors.New("the request needs task and dom, e.g. {\"task\":\"FETCH\",\"dom\":\"HR\",\"return\":\"HR-Agent\"}")
	}
	p.Task, p.Dom = strings.TrimSpace(p.Task), strings.TrimSpace(p.Dom)
	if p.Task == "" || p.Dom == "" || strings.ContainsAny(p.Task+p.Dom, "|: \t\n\r") {
		return nil, errors.New("task and dom are single words, with no '|', ':' or white space")
	}
	if _, ok := fields["aacp"]; !ok {
		fields["aacp"] = Version
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		if !validKey(k) {
			return nil, fmt.Errorf("%q cannot be a field key: keys are letters, digits, '_', '-' and '.'", k)
		}
		if fields[k] == nil {
			continue
		}
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return fieldRank(keys[i]) < fieldRank(keys[j]) || fieldRank(keys[i]) == fieldRank(keys[j]) && keys[i] < keys[j]
	})
	for _, k := range keys {
		v, err := encodeValue(fields[k], 0)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", k, err)
		}
		p.Fields = append(p.Fields, Field{Key: k, Value: v})
	}
	return p, nil
}

// fieldRank orders keys: return, p, aacp, to, core fields, extended fields, then the rest.
func fieldRank(k string) int {
	switch k {
	case "return":
		return 0
	case "p":
		return 1
	case "aacp":
		return 2
	case "to":
		return 3
	}
	if i, ok := knownField[k]; ok {
		return 10 + i
	}
	return 1000
}

// encodeValue writes one JSON value as v1.1 text. depth counts enclosing objects/arrays.
func encodeValue(v any, depth int) (string, error) {
	switch x := v.(type) {
	case string:
		if strings.ContainsAny(x, "|\n\r") {
			return "", errors.New("v1.1 has no escaping, so a value cannot contain '|' or a line break")
		}
		return strings.Join(strings.Fields(x), "_"), nil
	case json.Number:
		return x.String(), nil
	case bool:
		if x {
			return "true", nil
		}
		return "false", nil
	case []any:
		sep := ","
		if depth > 0 {
			sep = "+"
		}
		parts := make([]string, 0, len(x))
		for _, e := range x {
			switch e.(type) {
			case []any, map[string]any:
				return "", errors.New("a list item must be a string, number or boolean")
			case nil:
				continue
			}
			s, err := encodeValue(e, depth+1)
			if err != nil {
				return "", err
			}
			if strings.Contains(s, sep) || (depth == 0 && strings.Contains(s, ",")) {
				return "", fmt.Errorf("list item %q contains %q, which separates list items", s, sep)
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, sep), nil
	case map[string]any:
		if depth > 0 {
			return "", errors.New("objects nest one level at most")
		}
		names := make([]string, 0, len(x))
		for k := range x {
			names = append(names, k)
		}
		sort.Strings(names)
		parts := make([]string, 0, len(names))
		for _, k := range names {
			if x[k] == nil {
				continue
			}
			if strings.ContainsAny(k, "=,|:") || strings.IndexFunc(k, unicode.IsSpace) >= 0 {
				return "", fmt.Errorf("name %q cannot contain '=', ',', '|', ':' or white space", k)
			}
			s, err := encodeValue(x[k], depth+1)
			if err != nil {
				return "", err
			}
			if strings.Contains(s, ",") {
				return "", fmt.Errorf("value of %s contains ',', which separates pairs", k)
			}
			parts = append(parts, k+"="+s)
		}
		return strings.Join(parts, ","), nil
	case nil:
		return "", nil
	}
	return "", fmt.Errorf("unsupported value %v", v)
}
