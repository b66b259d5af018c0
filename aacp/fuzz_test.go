package aacp

import (
	"reflect"
	"strings"
	"testing"

	"github.com/parleyhq/parley/convention"
)

// FuzzParse: Parse, Validate, Decode and Quote never panic; diagnostics are well formed; and
// a packet that parses without an error renders (String) to text that parses back to the
// same packet and renders to the same bytes.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"FETCH|HR|return:HR-Agent|p:1|aacp:1.1|res:emp_salary|\nperiod:2024-08|filter:status=active|fmt:json",
		"REPORT|IT|return:builder|p:1|aacp:1.1|to:lead|flags:unit_tests_passing_12_cases(claim),todo=route_test_429_path",
		"LOG | IT || return:a|x|",
		"BUILD|IT|return:a|p:1|aacp:1.1|filter:password=hunter2|att:https://u:p@h/x",
		"SEND|CS|return:a\r\n|aacp:1.1\nsecond",
		"|||",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		p, diags := Check(src, Options{RequireTo: true, Roster: []string{"lead"}})
		for _, d := range diags {
			if d.Line < 1 || d.Col < 1 || (d.Severity != convention.SeverityError && d.Severity != convention.SeverityWarning) || d.Code == "" || d.Message == "" {
				t.Fatalf("bad diagnostic %+v", d)
			}
		}
		_ = Decode(p)
		_ = Quote(p)
		p0, perrs := Parse(src)
		for _, d := range perrs {
			if d.Severity == convention.SeverityError {
				return
			}
		}
		r1 := p0.String()
		p1, perrs := Parse(r1)
		if len(perrs) > 0 {
			t.Fatalf("the rendering of a packet that parsed does not parse: %v\nsrc %q\nrendered %q", perrs, src, r1)
		}
		if p0.Task != p1.Task || p0.Dom != p1.Dom || len(p0.Fields) != len(p1.Fields) {
			t.Fatalf("round trip changed the packet\nsrc %q\nrendered %q", src, r1)
		}
		for i := range p0.Fields {
			a, b := p0.Fields[i], p1.Fields[i]
			if a.Key != b.Key || a.Value != b.Value {
				t.Fatalf("round trip changed field %d: %+v → %+v", i, a, b)
			}
		}
		if r2 := p1.String(); r2 != r1 {
			t.Fatalf("rendering is not stable: %q then %q", r1, r2)
		}
	})
}

// FuzzEncode: Encode never panics, and what it encodes parses back without an error to the
// same bytes.
func FuzzEncode(f *testing.F) {
	for _, s := range []string{
		`{"task":"FETCH","dom":"HR","return":"HR-Agent","p":1,"res":"emp_salary","filter":{"status":"active"}}`,
		`{"task":"BUILD","dom":"IT","return":"a","fields":["email","dept"],"terms":{"must_not":["push to main","add deps"]}}`,
		`{"task":"X","dom":"Y","a":null,"b":true,"c":1e3}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, req string) {
		p, err := Encode([]byte(req))
		if err != nil {
			return
		}
		back, diags := Parse(p.String())
		for _, d := range diags {
			if d.Severity == convention.SeverityError {
				t.Fatalf("encoded packet %q does not parse: %v", p.String(), d)
			}
		}
		if back.String() != p.String() || !reflect.DeepEqual(keys(back), keys(p)) {
			t.Fatalf("encode then parse changed the packet: %q → %q", p.String(), back.String())
		}
	})
}

func keys(p *Packet) []string {
	var out []string
	for _, f := range p.Fields {
		out = append(out, f.Key+"="+f.Value)
	}
	return out
}

func FuzzSensitiveText(f *testing.F) {
	for _, s := range []string{"password: hunter2", "card 4111 1111 1111 1111", "a@b.co", "\n\nkey=sk-proj-abcdefghijklmnopqrstuvwx", "plain words"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		why, line, col, ok := SensitiveText(s)
		if !ok {
			return
		}
		lines := strings.Split(s, "\n")
		if why == "" || line < 1 || line > len(lines) || col < 1 || col > len(lines[line-1])+1 {
			t.Fatalf("SensitiveText(%q) = %q at %d:%d", s, why, line, col)
		}
	})
}
