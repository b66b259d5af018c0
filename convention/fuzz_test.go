package convention

import (
	"reflect"
	"testing"
)

// FuzzParse holds three properties on any input: Parse, Validate, Lint and Render never
// panic; every diagnostic has a position and a known severity; and for an input that parses
// without an error, rendering and parsing again gives the same message, whose rendering is
// stable (parse∘render is the identity on what parses).
func FuzzParse(f *testing.F) {
	seeds := []string{
		// The study's three messages and the published p2 with its wrong n.
		"v1 request limiter to builder n=2\nreq rate limit POST /api/search: 60 req/min per API key\nask accept or decline, 20260917T1800Z\n",
		"v1 report limiter to lead n=10\nask decide 20260918T0900Z: mock Redis in tests, or skip the route test\noutcome partial\ndone#1 limiter lib/rate-limit.ts sliding window\nev#1 commit 3f9a2c1 on branch feat/rate-limit\n",
		"v1 propose limiter to yu n=2\nopt/A Redis sliding window\ndecider yu (CTO)\n",
		// Header variants and mistakes.
		"v1 answer limiter to lead, yu re #12 n=1\nok\n",
		"V1 report limiter to: @lead n = 2\r\n- done #1 x\r\n",
		"v1 report limiter lead n=1\n\n\nDone: 2026-09-19T12:00:00+02:00\n",
		"v1 x y to a,,b n=99999999999999999999\n",
		"v1 report limiter to lead n=1\n{\"a\": [1, 2]}\n",
		"\ufeffv1 note t to all n=0",
		"v1",
		"",
		"v1 note t to all n=1\nev#1 commit 3f9a2c1\ndone#1 x\nmara decides by 9pm UTC on Sep 19, 2026\n",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		m, diags := Check(src, Options{Counter: o200k, Roster: []string{"lead", "yu"}})
		for _, d := range diags {
			if d.Line < 1 || d.Col < 1 || (d.Severity != SeverityError && d.Severity != SeverityWarning) || d.Code == "" || d.Message == "" {
				t.Fatalf("bad diagnostic %+v", d)
			}
		}
		m0, perrs := Parse(src)
		if len(perrs) > 0 {
			return
		}
		// Lint on its own, as a caller with a message built in code uses it: Check refuses
		// text that is not UTF-8 before its linter runs, Lint does not.
		Lint(m0, Options{Counter: o200k, Roster: []string{"lead", "yu"}})
		r1 := Render(m0)
		m1, perrs := Parse(r1)
		if len(perrs) > 0 {
			t.Fatalf("the rendering of a message that parsed does not parse: %v\nsrc %q\nrendered %q", perrs, src, r1)
		}
		if !sameMessage(m0, m1) {
			t.Fatalf("parse∘render changed the message\nsrc %q\nrendered %q\nbefore %+v\nafter %+v", src, r1, m0, m1)
		}
		if r2 := Render(m1); r2 != r1 {
			t.Fatalf("rendering is not stable: %q then %q", r1, r2)
		}
		_ = m
	})
}

// sameMessage compares what a message means: the header and each line's word, key, mark and
// text (not where they were written).
func sameMessage(a, b *Message) bool {
	if !reflect.DeepEqual(a.Header, b.Header) || len(a.Lines) != len(b.Lines) {
		return false
	}
	for i := range a.Lines {
		x, y := a.Lines[i], b.Lines[i]
		if x.Word != y.Word || x.Key != y.Key || x.Mark != y.Mark || x.Text != y.Text || x.Reserved != y.Reserved {
			return false
		}
	}
	return true
}
