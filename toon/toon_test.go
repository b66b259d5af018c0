package toon

import (
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden .toon files in testdata")

// mustParse decodes JSON text for a test, failing it on error.
func mustParse(tb testing.TB, s string) any {
	tb.Helper()
	v, err := ParseJSON([]byte(s))
	if err != nil {
		tb.Fatalf("ParseJSON(%s): %v", s, err)
	}
	return v
}

func TestEncode(t *testing.T) {
	tests := []struct {
		name string
		json string
		want string
	}{
		// Objects.
		{"flat object", `{"a":1,"b":"x"}`, "a: 1\nb: x"},
		{"key order kept", `{"z":1,"a":2}`, "z: 1\na: 2"},
		{"nested object", `{"a":{"b":{"c":true}}}`, "a:\n  b:\n    c: true"},
		{"empty nested object", `{"a":{}}`, "a:"},
		{"empty root object", `{}`, ""},
		{"null and bools", `{"n":null,"t":true,"f":false}`, "n: null\nt: true\nf: false"},

		// Root primitives.
		{"root string", `"hello world"`, "hello world"},
		{"root number", `42`, "42"},
		{"root string that needs quotes", `"true"`, `"true"`},

		// Primitive arrays.
		{"inline array", `{"tags":["a","b","c"]}`, "tags[3]: a,b,c"},
		{"empty array", `{"tags":[]}`, "tags[0]:"},
		{"mixed primitives", `{"v":[1,"x",true,null]}`, "v[4]: 1,x,true,null"},
		{"cell with comma quoted", `{"v":["a,b","c"]}`, `v[2]: "a,b",c`},
		{"cell with space unquoted", `{"v":["a b"]}`, "v[1]: a b"},
		{"root inline array", `[1,2]`, "[2]: 1,2"},
		{"root empty array", `[]`, "[0]:"},

		// Tables.
		{"table", `{"u":[{"id":1,"n":"Ada"},{"id":2,"n":"Linus"}]}`, "u[2]{id,n}:\n  1,Ada\n  2,Linus"},
		{"table columns follow first object", `{"u":[{"b":1,"a":2},{"a":3,"b":4}]}`, "u[2]{b,a}:\n  1,2\n  4,3"},
		{"table cell quoting", `{"u":[{"s":"x,y"},{"s":""}]}`, "u[2]{s}:\n  \"x,y\"\n  \"\""},
		{"root table", `[{"a":1},{"a":2}]`, "[2]{a}:\n  1\n  2"},
		{"different keys is a list", `{"u":[{"a":1},{"b":2}]}`, "u[2]:\n  - a: 1\n  - b: 2"},
		{"nested value is a list", `{"u":[{"a":[1]}]}`, "u[1]:\n  - a[1]: 1"},
		{"empty objects are a list", `{"u":[{},{}]}`, "u[2]:\n  -\n  -"},

		// Expanded lists.
		{"list of mixed", `{"m":[1,{"a":1},[2,3]]}`, "m[3]:\n  - 1\n  - a: 1\n  - [2]: 2,3"},
		{"array of arrays", `{"m":[[1,2],[]]}`, "m[2]:\n  - [2]: 1,2\n  - [0]:"},
		{"object item fields", `{"m":[{"a":1,"b":2},3]}`, "m[2]:\n  - a: 1\n    b: 2\n  - 3"},
		{"object item nested first field", `{"m":[{"a":{"x":1},"b":2},3]}`, "m[2]:\n  - a:\n      x: 1\n    b: 2\n  - 3"},
		{"object item table first field", `{"m":[{"t":[{"x":1},{"x":2}],"b":2},3]}`,
			"m[2]:\n  - t[2]{x}:\n      1\n      2\n    b: 2\n  - 3"},
		{"object item list first field", `{"m":[{"l":[1,[2]],"b":2}]}`,
			"m[1]:\n  - l[2]:\n      - 1\n      - [1]: 2\n    b: 2"},
		{"list item holding uniform objects is a list", `{"m":[[{"x":1},{"x":2}],0]}`, "m[2]:\n  - [2]:\n    - x: 1\n    - x: 2\n  - 0"},
		{"list item holding a list", `{"m":[[[1],2]]}`, "m[1]:\n  - [2]:\n    - [1]: 1\n    - 2"},

		// String quoting (§7.2).
		{"empty string", `{"s":""}`, `s: ""`},
		{"leading space", `{"s":" a"}`, `s: " a"`},
		{"trailing space", `{"s":"a "}`, `s: "a "`},
		{"inner spaces are fine", `{"s":"a b c"}`, "s: a b c"},
		{"true as string", `{"s":"true"}`, `s: "true"`},
		{"null as string", `{"s":"null"}`, `s: "null"`},
		{"True is not a literal", `{"s":"True"}`, "s: True"},
		{"integer-like", `{"s":"42"}`, `s: "42"`},
		{"decimal-like", `{"s":"-3.14"}`, `s: "-3.14"`},
		{"exponent-like", `{"s":"1e-6"}`, `s: "1e-6"`},
		{"leading zero", `{"s":"05"}`, `s: "05"`},
		{"leading plus", `{"s":"+1"}`, `s: "+1"`},
		{"plus alone is fine", `{"s":"+"}`, "s: +"},
		{"version string is fine", `{"s":"1.2.3"}`, "s: 1.2.3"},
		{"colon", `{"s":"a:b"}`, `s: "a:b"`},
		{"ISO time has colons", `{"s":"2026-09-19T12:00:00Z"}`, `s: "2026-09-19T12:00:00Z"`},
		{"ISO basic time has none", `{"s":"20260919T1200Z"}`, "s: 20260919T1200Z"},
		{"quote escaped", `{"s":"say \"hi\""}`, `s: "say \"hi\""`},
		{"backslash escaped", `{"s":"a\\b"}`, `s: "a\\b"`},
		{"brackets", `{"s":"[x]"}`, `s: "[x]"`},
		{"braces", `{"s":"{x}"}`, `s: "{x}"`},
		{"newline escaped", `{"s":"a\nb"}`, `s: "a\nb"`},
		{"tab and CR escaped", `{"s":"a\tb\rc"}`, `s: "a\tb\rc"`},
		{"comma in object value", `{"s":"a,b"}`, `s: "a,b"`},
		{"pipe is not the delimiter", `{"s":"a|b"}`, "s: a|b"},
		{"hyphen alone", `{"s":"-"}`, `s: "-"`},
		{"list-like", `{"s":"- item"}`, `s: "- item"`},
		{"any leading hyphen", `{"s":"-x"}`, `s: "-x"`},
		{"inner hyphen is fine", `{"s":"job-rl-0917"}`, "s: job-rl-0917"},
		{"unicode is fine", `{"s":"café → 🔑"}`, "s: café → 🔑"},
		{"non-breaking space padding", "{\"s\":\"a\u00a0\"}", "s: \"a\u00a0\""},

		// Keys (§7.3).
		{"identifier key", `{"a_b.c9":1}`, "a_b.c9: 1"},
		{"hyphenated key quoted", `{"user-id":1}`, `"user-id": 1`},
		{"key with space quoted", `{"a b":1}`, `"a b": 1`},
		{"key starting with digit quoted", `{"9a":1}`, `"9a": 1`},
		{"empty key quoted", `{"":1}`, `"": 1`},
		{"empty key on an array", `{"":[]}`, `""[0]:`},
		{"empty key on a table", `{"":[{"a":1}]}`, "\"\"[1]{a}:\n  1"},
		{"emoji key quoted", `{"⏰":"20260919T1200Z"}`, `"⏰": 20260919T1200Z`},
		{"quoted key in header", `{"my-list":[1]}`, `"my-list"[1]: 1`},
		{"quoted field names", `{"t":[{"a b":1}]}`, "t[1]{\"a b\"}:\n  1"},

		// Numbers (§2).
		{"integer", `{"n":150000}`, "n: 150000"},
		{"negative zero", `{"n":-0}`, "n: 0"},
		{"trailing zeros", `{"n":1.5000}`, "n: 1.5"},
		{"integral float", `{"n":2.0}`, "n: 2"},
		{"exponent", `{"n":1e6}`, "n: 1000000"},
		{"negative exponent", `{"n":1.5e-7}`, "n: 0.00000015"},
		{"upper E plus", `{"n":-3.25E+2}`, "n: -325"},
		{"zero with exponent", `{"n":0e10}`, "n: 0"},
		{"beyond float64 precision kept", `{"n":12345678901234567890.123456789}`, "n: 12345678901234567890.123456789"},
		{"small fraction", `{"n":0.7}`, "n: 0.7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Encode(mustParse(t, tt.json))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Encode(%s)\n got: %q\nwant: %q", tt.json, got, tt.want)
			}
		})
	}
}

func TestEncodeOptions(t *testing.T) {
	v := mustParse(t, `{"a":["x,y","p|q"],"t":[{"k":"a,b","l":"c|d"}],"s":"u|v","w":"m,n"}`)
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"comma", Options{}, "a[2]: \"x,y\",p|q\nt[1]{k,l}:\n  \"a,b\",c|d\ns: u|v\nw: \"m,n\""},
		{"pipe", Options{Delimiter: Pipe}, "a[2|]: x,y|\"p|q\"\nt[1|]{k|l}:\n  a,b|\"c|d\"\ns: \"u|v\"\nw: m,n"},
		{"tab", Options{Delimiter: Tab}, "a[2\t]: x,y\tp|q\nt[1\t]{k\tl}:\n  a,b\tc|d\ns: u|v\nw: m,n"},
		{"indent 4", Options{Indent: 4}, "a[2]: \"x,y\",p|q\nt[1]{k,l}:\n    \"a,b\",c|d\ns: u|v\nw: \"m,n\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EncodeOptions(v, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got:  %q\nwant: %q", got, tt.want)
			}
		})
	}
	if _, err := EncodeOptions(v, Options{Delimiter: ';'}); err == nil {
		t.Error("a semicolon delimiter was accepted")
	}
	if _, err := EncodeOptions(v, Options{Indent: -1}); err == nil {
		t.Error("a negative indent was accepted")
	}
}

func TestEncodeGoValues(t *testing.T) {
	v := map[string]any{
		"z":    []any{1, int64(-2), uint8(3), 1.5, float32(0.25)},
		"a":    math.NaN(),
		"big":  1e21,
		"tiny": 1e-7,
		"inf":  math.Inf(1),
	}
	got, err := Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	// A map has no order of its own, so its keys come out sorted.
	want := "a: null\nbig: 1000000000000000000000\ninf: null\ntiny: 0.0000001\nz[5]: 1,-2,3,1.5,0.25"
	if got != want {
		t.Errorf("got:  %q\nwant: %q", got, want)
	}
}

func TestEncodeErrors(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want error
	}{
		{"unsupported type", Object{{"c", make(chan int)}}, nil},
		{"bad number", json.Number("1.2.3"), nil},
		{"empty number", json.Number(""), nil},
		{"huge exponent", json.Number("1e999999"), ErrNumberTooLong},
		{"tiny exponent", json.Number("1e-999999"), ErrNumberTooLong},
		{"exponent out of int range", json.Number("1e99999999999999999999999"), ErrNumberTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Encode(tt.v)
			if err == nil {
				t.Fatal("no error")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("error %v, want %v", err, tt.want)
			}
		})
	}
	// A cycle must end in an error, not a stack overflow.
	cyc := []any{nil}
	cyc[0] = cyc
	if _, err := Encode(cyc); err == nil {
		t.Error("a cyclic value was encoded")
	}
}

func TestCanonicalNumber(t *testing.T) {
	tests := map[string]string{
		"0": "0", "-0": "0", "0.0": "0", "-0.000e-5": "0", "007": "7", "1.10": "1.1",
		"100": "100", "1e2": "100", "1.23e1": "12.3", "1.23e-1": "0.123", "123e-5": "0.00123",
		"-1E+3": "-1000", "0.5": "0.5", "10.0e-1": "1", "120e-1": "12",
	}
	for in, want := range tests {
		got, err := canonicalNumber(in)
		if err != nil || got != want {
			t.Errorf("canonicalNumber(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-", ".5", "1.", "1e", "1e+", "e5", "1x", "+1", "1e+-5", "--1"} {
		if got, err := canonicalNumber(in); err == nil {
			t.Errorf("canonicalNumber(%q) = %q, want an error", in, got)
		}
	}
}

func TestParseJSON(t *testing.T) {
	v, err := ParseJSON([]byte(`{"b":1,"a":{"d":[true,null,"x"],"c":1.50}}`))
	if err != nil {
		t.Fatal(err)
	}
	o := v.(Object)
	if o[0].Key != "b" || o[1].Key != "a" {
		t.Errorf("key order lost: %v", o)
	}
	inner := o[1].Value.(Object)
	if c, _ := inner.Get("c"); c != json.Number("1.50") {
		t.Errorf("number digits changed: %#v", c)
	}
	if _, ok := inner.Get("zz"); ok {
		t.Error("Get found a missing key")
	}
	for _, bad := range []string{`{"a":1,"a":2}`, `{"a":1} x`, `{"a":`, `[1,]`, ``, `{1:2}`} {
		if _, err := ParseJSON([]byte(bad)); err == nil {
			t.Errorf("ParseJSON(%q) succeeded", bad)
		}
	}
	deep := strings.Repeat("[", maxDepth+2) + strings.Repeat("]", maxDepth+2)
	if _, err := ParseJSON([]byte(deep)); err == nil {
		t.Error("nesting past maxDepth was accepted")
	}
}

// TestGolden encodes every testdata/*.json, the study's three messages among them, and
// compares with the .toon file beside it. Run with -update to rewrite the .toon files.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	for _, in := range files {
		t.Run(filepath.Base(in), func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := FromJSON(data)
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, got, 2)
			v, _ := ParseJSON(data)
			roundTrip(t, v, got, 2)
			golden := strings.TrimSuffix(in, ".json") + ".toon"
			if *update {
				if err := os.WriteFile(golden, []byte(got+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got+"\n" != string(want) {
				t.Errorf("%s differs from %s:\n%s", in, golden, got)
			}
		})
	}
}

// checkInvariants asserts the structural guarantees of the package doc on an encoding.
func checkInvariants(tb testing.TB, out string, indent int) {
	tb.Helper()
	if strings.HasSuffix(out, "\n") {
		tb.Errorf("trailing newline in %q", out)
	}
	if strings.ContainsRune(out, '\r') {
		tb.Errorf("raw carriage return in %q", out)
	}
	if out == "" {
		return
	}
	prev := 0
	for i, line := range strings.Split(out, "\n") {
		if line == "" || strings.TrimSpace(line) == "" {
			tb.Errorf("line %d is blank in %q", i+1, out)
			continue
		}
		if strings.HasSuffix(line, " ") {
			tb.Errorf("line %d has a trailing space: %q", i+1, line)
		}
		spaces := len(line) - len(strings.TrimLeft(line, " "))
		if line[spaces] == '\t' {
			tb.Errorf("line %d is indented with a tab: %q", i+1, line)
		}
		if spaces%indent != 0 {
			tb.Errorf("line %d indent %d is not a multiple of %d: %q", i+1, spaces, indent, line)
		}
		// Depth grows by at most two levels from one line to the next (two only under a
		// hyphen line), and the first line is at depth 0.
		depth := spaces / indent
		if i == 0 && depth != 0 || depth > prev+2 {
			tb.Errorf("line %d jumps from depth %d to %d: %q", i+1, prev, depth, out)
		}
		prev = depth
	}
}

func BenchmarkEncodeStudyMessage(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "study-p3.json"))
	if err != nil {
		b.Fatal(err)
	}
	v, err := ParseJSON(data)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(v); err != nil {
			b.Fatal(err)
		}
	}
}
