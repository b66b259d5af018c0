package bench

import (
	"bytes"
	"strings"
	"testing"

	"github.com/parleyhq/parley/a2c"
	"github.com/parleyhq/parley/trace"
)

// TestA2CRoundTrip decodes every fixture's a2c/2 payload independently of the render path
// and compares it with message.json, byte for byte in canonical JSON.
func TestA2CRoundTrip(t *testing.T) {
	st := mustStudy(t)
	for _, m := range st.Messages {
		out, err := a2cText(m)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out, a2c.Magic+"\n") || strings.Count(out, "\n") != 2 || !strings.HasSuffix(out, "\n") {
			t.Errorf("%s: not a header and one record line:\n%s", m.Name, out)
		}
		_, recs, err := a2c.DecodeSession(out, nil)
		if err != nil || len(recs) != 1 {
			t.Fatalf("%s: decode: %d records, %v", m.Name, len(recs), err)
		}
		rec, err := trace.RecordFromValue(&recs[0])
		if err != nil {
			t.Fatal(err)
		}
		src, _ := m.File("message.json")
		want, err := trace.ParseJSON([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		from, _ := want.Get("from")
		to, _ := want.Get("to")
		if rec.Kind != trace.KindMessage || rec.From != from.Str || rec.To != to.Str || rec.Meta == nil {
			t.Errorf("%s: record %+v", m.Name, rec)
		}
		got := trace.Value{Kind: trace.Object, Members: append([]trace.Member{
			{Key: "from", Value: trace.StringValue(rec.From)}, {Key: "to", Value: trace.StringValue(rec.To)},
		}, rec.Meta.Members...)}
		if !bytes.Equal(trace.Canonical(&got), trace.Canonical(&want)) {
			t.Errorf("%s: round trip differs:\n%s\n%s", m.Name, trace.Canonical(&got), trace.Canonical(&want))
		}
		enc, err := a2cSession(m)
		if err != nil {
			t.Fatal(err)
		}
		// Every fixture uses exactly the features of the grammar.
		if enc.Instructions != A2CGrammar || enc.UsesDict {
			t.Errorf("%s: instructions %q, dictionary %v", m.Name, enc.Instructions, enc.UsesDict)
		}
	}
}

// TestA2CRows checks the a2c row of the tables: every message under both encodings, its
// tokens those of the payload, its grammar the decode instructions.
func TestA2CRows(t *testing.T) {
	st := mustStudy(t)
	encs := mustEncodings(t)
	res, err := Formats(st, Config{Encodings: encs})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Message{}
	for _, m := range st.Messages {
		byName[m.Name] = m
	}
	seen := map[[2]string]bool{}
	for _, r := range res.Rows {
		if r.Format != "a2c" {
			continue
		}
		seen[[2]string{r.Message, r.Encoding}] = true
		out, err := a2cText(byName[r.Message])
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range encs {
			if e.Name() == r.Encoding && (r.Tokens != e.Count(out) || r.Tokens == 0) {
				t.Errorf("%s/%s: %d tokens, the payload counts %d", r.Message, r.Encoding, r.Tokens, e.Count(out))
			}
		}
	}
	for _, m := range []string{"p1", "p2", "p3"} {
		for _, e := range encs {
			if !seen[[2]string{m, e.Name()}] {
				t.Errorf("no a2c row for %s under %s", m, e.Name())
			}
		}
	}
	grammars := 0
	for _, g := range res.Grammar {
		if g.Format != "a2c" {
			continue
		}
		grammars++
		for _, e := range encs {
			if e.Name() == g.Encoding && (g.GrammarTokens != e.Count(A2CGrammar) || g.GrammarTokens == 0) {
				t.Errorf("a2c grammar row %+v", g)
			}
		}
	}
	if grammars != len(encs) {
		t.Errorf("%d a2c grammar rows, want %d", grammars, len(encs))
	}
}

func TestA2CMapping(t *testing.T) {
	// from and to that are not non-empty strings stay in meta, and still round-trip.
	for _, src := range []string{
		`{"from": 5, "to": "", "x": [1, 2.50, null]}`,
		`{"x": "no from or to"}`,
		`{"from": "a", "to": "b"}`,
	} {
		m := Message{Name: "px", Files: map[string]string{"message.json": src}}
		if _, err := a2cText(m); err != nil {
			t.Errorf("%s: %v", src, err)
		}
	}
	for name, src := range map[string]string{"broken JSON": "{", "not an object": "[1]"} {
		m := Message{Name: "px", Files: map[string]string{"message.json": src}}
		if _, err := a2cText(m); err == nil {
			t.Errorf("%s: a2cText succeeded", name)
		}
	}
	if _, err := a2cText(Message{Name: "px", Files: map[string]string{}}); err == nil {
		t.Error("a2cText without message.json succeeded")
	}
	// A message that needs more of a2c/2 than the grammar holds is an error, not a grammar
	// charged short.
	m := Message{Name: "px", Files: map[string]string{"message.json": `{"a": "{\"x\": 1}", "b": "say \"hi\""}`}}
	if _, err := a2cText(m); err == nil || !strings.Contains(err.Error(), "beyond the format's grammar") {
		t.Errorf("a message beyond the grammar: %v", err)
	}
}
