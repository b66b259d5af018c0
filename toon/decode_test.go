package toon

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// testDecoder reads TOON back into the ordered model so tests can check that
// decode(encode(v)) gives v again. It is an oracle for this package's own output, not a
// general decoder: it trusts indentation to be exact and knows only the forms Encode writes,
// which is what makes it small enough to trust.
type testDecoder struct {
	lines  []testLine
	i      int
	indent int
}

type testLine struct {
	depth int
	text  string
}

func decodeForTest(s string, indent int) (v any, err error) {
	d := &testDecoder{indent: indent}
	if s != "" {
		for n, l := range strings.Split(s, "\n") {
			t := strings.TrimLeft(l, " ")
			sp := len(l) - len(t)
			if sp%indent != 0 {
				return nil, fmt.Errorf("line %d: indent %d", n+1, sp)
			}
			d.lines = append(d.lines, testLine{sp / indent, t})
		}
	}
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("line %d: %v", d.i+1, r)
		}
	}()
	v = d.root()
	if d.i != len(d.lines) {
		panic(fmt.Sprintf("%d lines left over", len(d.lines)-d.i))
	}
	return v, nil
}

func (d *testDecoder) root() any {
	if len(d.lines) == 0 {
		return Object{}
	}
	first := d.lines[0].text
	if strings.HasPrefix(first, "[") {
		d.i++
		return d.arrayFrom(first, 1)
	}
	if _, _, ok := splitKey(first); !ok {
		if len(d.lines) != 1 {
			panic("a root primitive must be the only line")
		}
		d.i++
		return parseScalar(first)
	}
	return d.object(0)
}

// object reads the fields at depth until the depth drops.
func (d *testDecoder) object(depth int) Object {
	o := Object{}
	for d.i < len(d.lines) && d.lines[d.i].depth == depth {
		text := d.lines[d.i].text
		d.i++
		o = append(o, d.field(text, depth+1, depth+1))
	}
	return o
}

// field reads one "key: value", "key:" or "key[N]…" whose nested content sits at
// nestedDepth (object fields) or childDepth (array rows and items).
func (d *testDecoder) field(text string, nestedDepth, childDepth int) Member {
	key, rest, ok := splitKey(text)
	if !ok {
		panic(fmt.Sprintf("not a field: %q", text))
	}
	switch {
	case strings.HasPrefix(rest, "["):
		return Member{key, d.arrayFrom(rest, childDepth)}
	case rest == ":":
		if d.i < len(d.lines) && d.lines[d.i].depth == nestedDepth {
			return Member{key, d.object(nestedDepth)}
		}
		return Member{key, Object{}}
	case strings.HasPrefix(rest, ": "):
		return Member{key, parseScalar(rest[2:])}
	}
	panic(fmt.Sprintf("bad field %q", text))
}

// arrayFrom reads an array whose header ("[N…]…: …") starts s.
func (d *testDecoder) arrayFrom(s string, childDepth int) []any {
	end := strings.IndexByte(s, ']')
	if end < 0 {
		panic("unterminated bracket")
	}
	body := s[1:end]
	delim := byte(',')
	if strings.HasSuffix(body, "|") || strings.HasSuffix(body, "\t") {
		delim = body[len(body)-1]
		body = body[:len(body)-1]
	}
	n, err := strconv.Atoi(body)
	if err != nil {
		panic(err)
	}
	s = s[end+1:]
	var fields []string
	if strings.HasPrefix(s, "{") {
		close := strings.LastIndex(s, "}:")
		for _, f := range splitDelim(s[1:close], delim) {
			k, rest, ok := splitKey(f + ":")
			if !ok || rest != ":" {
				panic(fmt.Sprintf("bad field name %q", f))
			}
			fields = append(fields, k)
		}
		s = s[close+1:]
	}
	arr := []any{}
	switch {
	case fields != nil:
		for range n {
			cells := splitDelim(d.take(childDepth), delim)
			if len(cells) != len(fields) {
				panic("row width")
			}
			row := Object{}
			for j, f := range fields {
				row = append(row, Member{f, parseScalar(cells[j])})
			}
			arr = append(arr, row)
		}
	case s == ":":
		for range n {
			arr = append(arr, d.listItem(childDepth))
		}
	case strings.HasPrefix(s, ": "):
		for _, c := range splitDelim(s[2:], delim) {
			arr = append(arr, parseScalar(c))
		}
		if len(arr) != n {
			panic("inline count")
		}
	default:
		panic(fmt.Sprintf("bad header tail %q", s))
	}
	return arr
}

func (d *testDecoder) take(depth int) string {
	if d.i >= len(d.lines) || d.lines[d.i].depth != depth {
		panic(fmt.Sprintf("expected a line at depth %d", depth))
	}
	d.i++
	return d.lines[d.i-1].text
}

func (d *testDecoder) listItem(depth int) any {
	text := d.take(depth)
	if text == "-" {
		return Object{}
	}
	if !strings.HasPrefix(text, "- ") {
		panic(fmt.Sprintf("not a list item: %q", text))
	}
	c := text[2:]
	if strings.HasPrefix(c, "[") {
		return d.arrayFrom(c, depth+1)
	}
	if _, _, ok := splitKey(c); !ok {
		return parseScalar(c)
	}
	o := Object{d.field(c, depth+2, depth+2)}
	return append(o, d.object(depth+1)...)
}

// splitKey splits a key from what follows it (":" or "["). ok is false when s does not
// start with a key followed by one of those.
func splitKey(s string) (key, rest string, ok bool) {
	if strings.HasPrefix(s, `"`) {
		k, n, err := unquoteTest(s)
		if err != nil || n == len(s) || s[n] != ':' && s[n] != '[' {
			return "", "", false
		}
		return k, s[n:], true
	}
	i := 0
	for i < len(s) && s[i] != ':' && s[i] != '[' {
		i++
	}
	if i == len(s) || !validKey(s[:i]) {
		return "", "", false
	}
	return s[:i], s[i:], true
}

// splitDelim splits on delim outside quoted strings.
func splitDelim(s string, delim byte) []string {
	var out []string
	start, inQ := 0, false
	for i := 0; i < len(s); i++ {
		switch {
		case inQ && s[i] == '\\':
			i++
		case s[i] == '"':
			inQ = !inQ
		case !inQ && s[i] == delim:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

func parseScalar(s string) any {
	switch {
	case strings.HasPrefix(s, `"`):
		v, n, err := unquoteTest(s)
		if err != nil || n != len(s) {
			panic(fmt.Sprintf("bad quoted value %q", s))
		}
		return v
	case s == "true":
		return true
	case s == "false":
		return false
	case s == "null":
		return nil
	case numberLike(s) && !strings.HasPrefix(s, "+") && !(len(s) > 1 && s[0] == '0' && allDigits(s[1:])):
		return json.Number(s)
	}
	return s
}

// unquoteTest reads a quoted string at the start of s and returns it and the bytes used.
func unquoteTest(s string) (string, int, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), i + 1, nil
		case '\\':
			if i+1 >= len(s) {
				return "", 0, fmt.Errorf("dangling escape")
			}
			i++
			switch s[i] {
			case '\\':
				b.WriteByte('\\')
			case '"':
				b.WriteByte('"')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			default:
				return "", 0, fmt.Errorf("bad escape \\%c", s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, fmt.Errorf("unterminated string")
}

// roundTrip checks that out decodes back to v (both compared after normalisation, which
// puts numbers in canonical form). Key order counts, with the one change TOON makes by
// design: the rows of a table take the first row's column order.
func roundTrip(tb testing.TB, v any, out string, indent int) {
	tb.Helper()
	got, err := decodeForTest(out, indent)
	if err != nil {
		tb.Fatalf("decoding our own output: %v\n%s", err, out)
	}
	want, err := normalize(v, 0)
	if err != nil {
		tb.Fatal(err)
	}
	want = tableOrder(want, false)
	back, err := normalize(got, 0)
	if err != nil {
		tb.Fatal(err)
	}
	if !reflect.DeepEqual(want, back) {
		tb.Fatalf("round trip changed the value\n toon: %q\n want: %#v\n  got: %#v", out, want, back)
	}
}

func TestRoundTripGoldenAndTable(t *testing.T) {
	inputs := []string{
		`{"a":{"b":{}},"c":[{"d":[{"e":1},{"e":2}],"f":{}},[],{}],"g":[[[]]]}`,
		`[[{"x":1},{"x":2}],{"":[""]}," x ","-","a:b","05","+1","1e5","true"]`,
		`{"t":[{"a":"x|y","b":"p,q","c":"t\tu"}],"l":["a|b","c,d"]}`,
	}
	for _, in := range inputs {
		v := mustParse(t, in)
		for _, d := range []Delimiter{Comma, Tab, Pipe} {
			out, err := EncodeOptions(v, Options{Delimiter: d, Indent: 3})
			if err != nil {
				t.Fatal(err)
			}
			roundTrip(t, v, out, 3)
		}
	}
}

// tableOrder returns v with the members of every table row put in column order, mirroring
// the encoder's choice of the tabular form (never for a keyless array inside a list).
func tableOrder(v any, listItem bool) any {
	switch t := v.(type) {
	case Object:
		out := make(Object, len(t))
		for i, m := range t {
			out[i] = Member{m.Key, tableOrder(m.Value, false)}
		}
		return out
	case []any:
		if cols := tableColumns(t); cols != nil && !listItem {
			out := make([]any, len(t))
			for i, x := range t {
				row := Object{}
				for _, c := range cols {
					cv, _ := x.(Object).Get(c)
					row = append(row, Member{c, cv})
				}
				out[i] = row
			}
			return out
		}
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = tableOrder(x, true)
		}
		return out
	}
	return v
}
