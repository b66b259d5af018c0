package mcp

import (
	"encoding/json"
	"testing"
)

type coerceArgs struct {
	N    int64    `json:"n,omitempty"`
	F    *float64 `json:"f,omitempty"`
	S    string   `json:"s"`
	List []string `json:"list,omitempty"`
}

func TestCoerce(t *testing.T) {
	schema := plainSchema[coerceArgs]()
	for in, want := range map[string]string{
		`{"n":"9"}`:                `{"n":9}`,
		`{"n":" -3 "}`:             `{"n":-3}`,
		`{"n":"+4"}`:               `{"n":4}`,
		`{"n":"9.5"}`:              `{"n":"9.5"}`, // refused by the schema, not rounded
		`{"f":"0.25"}`:             `{"f":0.25}`,
		`{"f":"NaN"}`:              `{"f":"NaN"}`,
		`{"s":2026}`:               `{"s":"2026"}`,
		`{"s":-1.5e3}`:             `{"s":"-1.5e3"}`,
		`{"s":true}`:               `{"s":"true"}`,
		`{"s":null}`:               `{"s":null}`,
		`{"list":["a"],"other":1}`: `{"list":["a"],"other":1}`,
		`[1]`:                      `[1]`,
	} {
		got, _ := coerce(schema, json.RawMessage(in))
		var g, w any
		if json.Unmarshal(got, &g) != nil || json.Unmarshal([]byte(want), &w) != nil {
			t.Errorf("coerce(%s) = %s, not JSON", in, got)
			continue
		}
		gb, _ := json.Marshal(g)
		wb, _ := json.Marshal(w)
		if string(gb) != string(wb) {
			t.Errorf("coerce(%s) = %s, want %s", in, got, want)
		}
	}
}

// FuzzCoerce: whatever the client sends, coerce returns JSON when it changes anything, and
// a second pass changes nothing more.
func FuzzCoerce(f *testing.F) {
	schema := plainSchema[coerceArgs]()
	for _, s := range []string{`{"n":"9"}`, `{"s":12}`, `{"f":"1e3","s":false}`, `{}`, `null`, `{"n":"0x10"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, changed := coerce(schema, json.RawMessage(in))
		if !changed {
			if string(out) != in {
				t.Fatalf("unchanged but different: %q -> %q", in, out)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("coerce(%q) = %q, not JSON", in, out)
		}
		if again, changed := coerce(schema, out); changed {
			t.Fatalf("second pass changed %q to %q", out, again)
		}
	})
}
