package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool arguments have plain schemas: every property names one JSON type, never a union such
// as {"type":["null","integer"]}, and an argument left out means its default. Clients that
// build arguments from the schema (the MCP Inspector turns `--tool-arg after=9` into a number
// only when the type is "integer") and models that read it both do better with one type; a
// union costs tokens and tells them nothing they can use.
//
// The schema is inferred from the Go struct as the SDK would (jsonschema.For: descriptions
// from the jsonschema tags, additionalProperties false) and then made plain: a pointer or a
// slice field, which the inference marks nullable, keeps only its non-null type.

// plainSchema infers In's input schema and drops "null" from every type union in it.
func plainSchema[In any]() *jsonschema.Schema {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: input schema of %T: %v", *new(In), err))
	}
	plain(s)
	return s
}

// plain rewrites s and the schemas under it in place so that each has a single type.
func plain(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) > 0 {
		var kept []string
		for _, t := range s.Types {
			if t != "null" {
				kept = append(kept, t)
			}
		}
		if len(kept) == 1 {
			s.Type, s.Types = kept[0], nil
		} else {
			s.Types = kept
		}
	}
	for _, p := range s.Properties {
		plain(p)
	}
	plain(s.Items)
	plain(s.AdditionalProperties)
}

// addTypedTool is sdk.AddTool with In's plain schema.
func addTypedTool[In any](t *tools, s *sdk.Server, tool *sdk.Tool, h sdk.ToolHandlerFor[In, any]) {
	schema := plainSchema[In]()
	tool.InputSchema = schema
	t.schemas[tool.Name] = schema
	sdk.AddTool(s, tool, h)
}

// coerceArgs is receiving middleware for tools/call: an integer or number argument sent as a
// string of digits ("9", as some clients send every --tool-arg value) becomes the number,
// and a string argument sent as a number or boolean (`--tool-arg key=2026`, which a client
// parsed as JSON) becomes its text. Anything else is left for the schema to refuse, with the
// SDK's message naming the argument.
func (t *tools) coerceArgs(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		p, ok := req.GetParams().(*sdk.CallToolParamsRaw)
		if !ok || p == nil || len(p.Arguments) == 0 {
			return next(ctx, method, req)
		}
		schema := t.schemas[p.Name]
		if schema == nil {
			return next(ctx, method, req)
		}
		if fixed, changed := coerce(schema, p.Arguments); changed {
			p.Arguments = fixed
		}
		return next(ctx, method, req)
	}
}

// coerce returns args with the values coerceArgs describes converted, and whether it
// changed anything. Arguments that are not a JSON object are returned as they are.
func coerce(schema *jsonschema.Schema, args json.RawMessage) (json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil {
		return args, false
	}
	changed := false
	for name, v := range m {
		ps := schema.Properties[name]
		if ps == nil || len(v) == 0 {
			continue
		}
		switch ps.Type {
		case "integer", "number":
			var s string
			if v[0] != '"' || json.Unmarshal(v, &s) != nil {
				continue
			}
			s = strings.TrimSpace(s)
			var num []byte
			if ps.Type == "integer" {
				n, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					continue
				}
				num = strconv.AppendInt(nil, n, 10)
			} else {
				f, err := strconv.ParseFloat(s, 64)
				if err != nil {
					continue
				}
				if num, err = json.Marshal(f); err != nil { // NaN, ±Inf
					continue
				}
			}
			m[name], changed = num, true
		case "string":
			switch {
			case v[0] == '-' || (v[0] >= '0' && v[0] <= '9'), string(v) == "true", string(v) == "false":
				b, _ := json.Marshal(string(v))
				m[name], changed = b, true
			}
		}
	}
	if !changed {
		return args, false
	}
	out, err := json.Marshal(m)
	if err != nil {
		return args, false
	}
	return out, true
}
