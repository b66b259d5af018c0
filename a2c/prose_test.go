package a2c

import (
	"errors"
	"strings"
	"testing"

	"github.com/parleyhq/parley/trace"
)

func parseRecs(t *testing.T, lines ...string) []trace.Value {
	t.Helper()
	out := make([]trace.Value, len(lines))
	for i, l := range lines {
		v, err := trace.ParseJSON([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		out[i] = v
	}
	return out
}

// TestProseLinesByHand: the payload of a prose session, worked out by hand from the
// grammar, and the records it decodes to.
func TestProseLinesByHand(t *testing.T) {
	recs := parseRecs(t,
		`{"kind":"message","from":"user","to":"agent","text":"Hi: there"}`,
		`{"kind":"plan","from":"agent","text":""}`,
		`{"kind":"tool_call","from":"agent","to":"search","tool":"search","call_id":"c1","args":"{\"q\": 1}"}`,
		`{"tool":"search","kind":"tool_result","from":"search","to":"agent","call_id":"c1","result":"ok ^1 ?? > y"}`,
	)
	if !ProseFits(recs) {
		t.Fatal("ProseFits = false for a session of the four prose shapes")
	}
	enc, err := EncodeSession("s 1", recs, Options{proseLines: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "a2c/2+t s 1\n" +
		"message user>agent: Hi: there\n" +
		"plan agent: \n" +
		"tool_call agent>search c1: {\"q\": 1}\n" +
		"tool_result search>agent c1: ok ^^1 ??? > y\n"
	if got := enc.Payload(); got != want {
		t.Fatalf("payload\n%s\nwant\n%s", got, want)
	}
	if enc.Instructions != proseNote+" ^^=^, ??=?." {
		t.Fatalf("instructions %q", enc.Instructions)
	}
	roundTrip(t, "prose", recs, Options{proseLines: true})
	roundTrip(t, "prose+splices", append(recs, recs...), Options{proseLines: true, Splices: true, MinSplice: 4})
}

func TestProseFitsOnlyItsShapes(t *testing.T) {
	for _, rec := range []string{
		`{"kind":"plan","from":"agent","text":"x","meta":"y"}`, // another member
		`{"kind":"plan","from":"agent"}`,
		`{"kind":"a2c/2","from":"agent","text":"x"}`,                                       // would read as a header                                                   // no text
		`{"kind":"plan","text":"x"}`,                                                       // no from
		`{"kind":"plan","from":"agent","text":"two\nlines"}`,                               // a newline
		`{"kind":"plan","from":"the agent","text":"x"}`,                                    // a space in from
		`{"kind":"plan","from":"a>b","text":"x"}`,                                          // > in from
		`{"kind":"plan","from":"a:b","text":"x"}`,                                          // : in from
		`{"kind":"plan","from":"agent","text":"x","text":"y"}`,                             // a name twice
		`{"kind":"plan","from":"agent","text":1}`,                                          // not a string
		`{"kind":"plan","from":"agent","to":"","text":"x"}`,                                // empty to
		`{"kind":"tool_call","from":"a","to":"t","tool":"u","call_id":"c","args":"{}"}`,    // tool ≠ to
		`{"kind":"tool_call","from":"a","to":"t","tool":"t","call_id":"c","args":{}}`,      // args not a string
		`{"kind":"tool_call","from":"a","to":"t","tool":"t","args":"{}"}`,                  // no call_id
		`{"kind":"tool_result","from":"t","to":"a","tool":"a","call_id":"c","result":"r"}`, // tool ≠ from
		`{"kind":"tool_call","from":"a","to":"t","tool":"t","call_id":"c","text":"x"}`,     // text, not args
	} {
		recs := parseRecs(t, rec)
		if ProseFits(recs) {
			t.Errorf("ProseFits(%s) = true", rec)
		}
		if _, err := EncodeSession("", recs, Options{proseLines: true}); err == nil {
			t.Errorf("prose lines encoded %s without an error", rec)
		}
		// Adapt falls back to the other lines, losslessly.
		roundTrip(t, rec, recs, Default(mustCounter(t)))
	}
}

func TestProseDecodeErrors(t *testing.T) {
	for _, p := range []string{
		"a2c/2+t\nplan agent text\n",       // no ": "
		"a2c/2+t\nplan agent c1: x\n",      // a call_id on a plan
		"a2c/2+t\ntool_call agent c1: x\n", // no to
		"a2c/2+t\ntool_result a>b: x\n",    // no call_id
		"a2c/2+t\nplan a>b>c: x\n",         // > in to
		"a2c/2+t\n: x\n",                   // no kind
		"a2c/2+t\nplan agent: a\tb\n",      // a control character
		"a2c/2+t\nplan agent: ^0599\n",     // a splice beyond the text
	} {
		_, _, err := DecodeSession(p, nil)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: err = %v, want a SyntaxError", p, err)
		}
	}
}

// TestAdaptChoosesProseOnShortReAct: on a short ReAct training session Default writes
// prose lines, and they cost fewer tokens than what Default writes without them.
func TestAdaptChoosesProseOnShortReAct(t *testing.T) {
	c := mustCounter(t)
	s := trace.SyntheticReAct(1, 1)[0]
	recs := RecordValues(&s)
	with := roundTrip(t, "default", recs, Default(c))
	off := Default(c)
	off.Prose = false
	without := roundTrip(t, "no prose", recs, off)
	cost := func(e *Encoded) int { return c.Count(e.Payload()) + c.Count(e.Instructions) }
	if !with.Features.Prose || !strings.HasPrefix(with.Header, "a2c/2+t ") {
		t.Fatalf("Default did not write prose lines: header %q", with.Header)
	}
	if without.Features.Prose || cost(with) >= cost(without) {
		t.Fatalf("prose %d tokens, without %d (prose feature %v)", cost(with), cost(without), without.Features.Prose)
	}
	t.Logf("prose %d tokens, without %d", cost(with), cost(without))
}

// TestRawValuesByHand: a string in a value slot written as ~ and raw text, worked out by
// hand: the quotes stay as they are, | is escaped, the newline kept.
func TestRawValuesByHand(t *testing.T) {
	c := mustCounter(t)
	recs := parseRecs(t, `{"kind":"tool_result","result":"say \"hi\" | and \"bye\" to \"them\"\nthen"}`)
	opt := Options{Schema: true, RawValues: true, RawNewlines: true, TokenAligned: true, Counter: c}
	enc := roundTrip(t, "raw values", recs, opt)
	want := "r|||||||~say \"hi\" \\| and \"bye\" to \"them\"\nthen"
	if enc.Lines[0] != want {
		t.Fatalf("line %q, want %q", enc.Lines[0], want)
	}
	if !enc.Features.RawValues || !strings.Contains(enc.Instructions, "~ then raw text") {
		t.Fatalf("features %+v, instructions %q", enc.Features, enc.Instructions)
	}
	// Without the option the same string goes quoted.
	opt.RawValues = false
	if enc := roundTrip(t, "quoted", recs, opt); strings.Contains(enc.Lines[0], "~") {
		t.Fatalf("RawValues off wrote %q", enc.Lines[0])
	}
	// A decoder reads ~ in any value slot, empty raw text included.
	_, got, err := DecodeSession("a2c/2\nc|a|b|||||~x\\|y|~\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(trace.Canonical(&got[0])); s != `{"from":"a","kind":"tool_call","meta":"","result":"x|y","to":"b"}` {
		t.Fatalf("decoded %s", s)
	}
}
