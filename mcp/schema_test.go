package mcp_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestToolSchemasArePlain walks every tool's input schema as tools/list sends it and fails
// on any argument without exactly one JSON type: a union ({"type":["null","integer"]}), a
// missing type, or an anyOf/oneOf standing in for one.
func TestToolSchemasArePlain(t *testing.T) {
	f := newFixture(t)
	list, err := f.connect(t, "ana").ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) == 0 {
		t.Fatal("tools/list is empty")
	}
	for _, tool := range list.Tools {
		b, err := json.Marshal(tool.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var schema map[string]any
		if err := json.Unmarshal(b, &schema); err != nil {
			t.Fatal(err)
		}
		for _, p := range unplain(tool.Name, schema) {
			t.Errorf("%s\n  in %s", p, b)
		}
	}
}

// unplain lists where s (at path) or a schema under it lacks a single type.
func unplain(path string, s map[string]any) []string {
	var bad []string
	switch ty := s["type"].(type) {
	case string:
	case nil:
		bad = append(bad, path+": no type")
	default:
		bad = append(bad, fmt.Sprintf("%s: type %v is a union", path, ty))
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if _, ok := s[k]; ok {
			bad = append(bad, path+": "+k)
		}
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for name, p := range props {
			if ps, ok := p.(map[string]any); ok {
				bad = append(bad, unplain(path+"."+name, ps)...)
			}
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		bad = append(bad, unplain(path+"[]", items)...)
	}
	return bad
}

// A client that sends an integer argument as a string of digits (as `--tool-arg after=1`
// arrives from some CLIs) gets it read as the integer; a string argument sent as a number
// is read as its text; anything else is refused naming the argument.
func TestArgumentsAsClientsSendThem(t *testing.T) {
	f := newFixture(t)
	ana := f.connect(t, "ana")
	for i := 1; i <= 2; i++ {
		if text, isErr := call(t, ana, "post", map[string]any{"body": fmt.Sprintf("v1 note limiter to all n=1\nfact %d\n", i)}); isErr {
			t.Fatalf("post: %s", text)
		}
	}
	text, isErr := call(t, ana, "read", map[string]any{"after": "1"})
	if isErr || strings.Contains(text, "#1 ana") || !strings.Contains(text, "#2 ana") || !strings.Contains(text, "read up to #2 --") {
		t.Errorf(`read after "1" (error %v):\n%s`, isErr, text)
	}
	text, isErr = call(t, ana, "read", map[string]any{"after": 0})
	if isErr || !strings.Contains(text, "#1 ana") {
		t.Errorf("read after 0 does not start from the start (error %v):\n%s", isErr, text)
	}
	text, isErr = call(t, ana, "read", map[string]any{"after": "one"})
	if !isErr || !strings.Contains(text, "after") {
		t.Errorf(`read after "one" is not refused naming the argument (error %v):\n%s`, isErr, text)
	}
	text, isErr = call(t, ana, "state", map[string]any{"topic": 2026})
	if isErr && strings.Contains(text, "validating") {
		t.Errorf("state with a numeric topic is refused by the schema:\n%s", text)
	}
	text, isErr = call(t, ana, "state", map[string]any{"topic": "limiter", "bogus": 1})
	if !isErr || !strings.Contains(text, "bogus") {
		t.Errorf("an unknown argument is not refused naming it (error %v):\n%s", isErr, text)
	}
}
