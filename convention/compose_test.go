package convention_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/parleyhq/parley/convention"
)

func TestCompose(t *testing.T) {
	for _, tc := range []struct {
		d    convention.Draft
		want string
	}{
		{convention.Draft{Intent: "request", Topic: "limiter", To: []string{"yu"}, Lines: []string{"req add a token bucket", "ask burst 10 ok?"}},
			"v1 request limiter to yu n=2\nreq add a token bucket\nask burst 10 ok?\n"},
		{convention.Draft{Intent: "answer", Topic: "limiter", To: []string{"lead", "yu"}, Re: 12, Lines: []string{"ok burst 10"}},
			"v1 answer limiter to lead,yu re 12 n=1\nok burst 10\n"},
		// A fact is stored as given, inner spaces and all.
		{convention.Draft{Intent: "note", Topic: "x", To: []string{"all"}, Lines: []string{"  indented  fact "}},
			"v1 note x to all n=1\n  indented  fact \n"},
	} {
		got, ds := convention.Compose(tc.d)
		if len(ds) > 0 || got != tc.want {
			t.Errorf("Compose(%+v) = %q %v, want %q", tc.d, got, ds, tc.want)
			continue
		}
		// The text is a valid message as the room reads it: n matches, nothing to fix.
		m, pd := convention.Parse(got)
		if vs := convention.Validate(m, convention.Options{}); len(pd)+len(vs) > 0 {
			t.Errorf("Compose(%+v) does not validate: %v %v", tc.d, pd, vs)
		}
	}
}

func TestComposeRefuses(t *testing.T) {
	ok := convention.Draft{Intent: "note", Topic: "x", To: []string{"all"}, Lines: []string{"a"}}
	for _, tc := range []struct {
		name   string
		change func(d *convention.Draft)
		line   int
		code   string
		says   string
	}{
		{"no intent", func(d *convention.Draft) { d.Intent = "" }, 1, "draft-intent", "intent is empty"},
		{"unknown intent", func(d *convention.Draft) { d.Intent = "Report" }, 1, "draft-intent", "is not one of"},
		{"no topic", func(d *convention.Draft) { d.Topic = "" }, 1, "draft-topic", "topic is empty"},
		{"two-word topic", func(d *convention.Draft) { d.Topic = "rate limiter" }, 1, "draft-topic", "not one word"},
		{"topic to", func(d *convention.Draft) { d.Topic = "to" }, 1, "draft-topic", "part of the header"},
		{"topic n=", func(d *convention.Draft) { d.Topic = "n=3" }, 1, "draft-topic", "part of the header"},
		{"no to", func(d *convention.Draft) { d.To = nil }, 1, "draft-to", "to is empty"},
		{"bad seat", func(d *convention.Draft) { d.To = []string{"lead", "a b"} }, 1, "draft-to", "`a b`"},
		{"seat with comma", func(d *convention.Draft) { d.To = []string{"a,b"} }, 1, "draft-to", "`a,b`"},
		{"negative re", func(d *convention.Draft) { d.Re = -1 }, 1, "draft-re", "re is -1"},
		{"no lines", func(d *convention.Draft) { d.Lines = nil }, 2, "draft-lines", "lines is empty"},
		{"line break", func(d *convention.Draft) { d.Lines = []string{"a", "b\nc"} }, 3, "draft-line", "lines[1] holds a line break"},
		{"carriage return", func(d *convention.Draft) { d.Lines = []string{"b\rc"} }, 2, "draft-line", "line break"},
		{"blank", func(d *convention.Draft) { d.Lines = []string{"a", " \t"} }, 3, "draft-line", "lines[1] is blank"},
		{"a header", func(d *convention.Draft) { d.Lines = []string{"v1 note x to all n=1", "a"} }, 2, "draft-line", "is itself a header"},
	} {
		d := ok
		d.To = slices.Clone(ok.To)
		tc.change(&d)
		got, ds := convention.Compose(d)
		if got != "" || len(ds) == 0 || ds[0].Line != tc.line || ds[0].Code != tc.code || !strings.Contains(ds[0].Message, tc.says) || ds[0].Severity != "error" {
			t.Errorf("%s: Compose = %q, %+v; want line %d %s %q", tc.name, got, ds, tc.line, tc.code, tc.says)
		}
	}
	if _, ds := convention.Compose(convention.Draft{Intent: "reports", Topic: "x", To: []string{"all"}, Lines: []string{"a"}}); len(ds) != 1 || ds[0].Fix != "report" {
		t.Errorf("a misspelt intent: %+v, want the fix report", ds)
	}
}

// FuzzCompose: whatever the parts, Compose either refuses with diagnostics or returns a text
// that parses back to exactly those parts, with n= the number of lines.
func FuzzCompose(f *testing.F) {
	f.Add("note", "limiter", "lead,yu", int64(0), "a fact\nanother")
	f.Add("answer", "x", "all", int64(12), "ok")
	f.Add("report", "to", "a", int64(1), "v1 note x to all n=1")
	f.Add("decide", "t", "b", int64(-3), " \t")
	f.Fuzz(func(t *testing.T, intent, topic, to string, re int64, lines string) {
		d := convention.Draft{Intent: intent, Topic: topic, To: strings.Split(to, ","), Re: re, Lines: strings.Split(lines, "\x1e")}
		text, ds := convention.Compose(d)
		if len(ds) > 0 {
			if text != "" {
				t.Fatalf("refused with text %q", text)
			}
			return
		}
		m, pd := convention.Parse(text)
		h := m.Header
		if len(pd) > 0 || h.Intent != intent || h.Topic != topic || !slices.Equal(h.To, d.To) || h.Re != re || h.N != len(d.Lines) || len(m.Lines) != len(d.Lines) {
			t.Fatalf("Compose(%+v) = %q, which reads back as %+v, %d lines, %v", d, text, h, len(m.Lines), pd)
		}
		for i, l := range m.Lines {
			if l.Raw != d.Lines[i] {
				t.Fatalf("line %d reads back as %q, given %q", i, l.Raw, d.Lines[i])
			}
		}
	})
}
