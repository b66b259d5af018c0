package a2c

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parleyhq/parley/bpe"
	"github.com/parleyhq/parley/internal/sharedtest"
	"github.com/parleyhq/parley/trace"
)

const corpus = "../../shared/corpus"

func mustCounter(tb testing.TB) Counter {
	tb.Helper()
	enc, err := bpe.Get("cl100k_base")
	if err != nil {
		tb.Fatal(err)
	}
	return enc
}

// configs are the option mixes every round-trip test runs: each mechanism alone, all
// together, with and without a tokenizer, and with a dictionary.
func configs(tb testing.TB) map[string]Options {
	c := mustCounter(tb)
	all := Default(c)
	noTok := Default(nil)
	tiny := Default(c)
	tiny.MinSplice, tiny.MinValueLen = 1, 1
	dict := Default(c)
	dict.Dictionary = &Dictionary{Text: `{"kind":"tool_call","from":"assistant"}` + "\nb|c«d\\x"}
	return map[string]Options{
		"canonical": {},
		"schema":    {Schema: true},
		"bare":      {Bare: true},
		"embedded":  {Embedded: true},
		"refs":      {ValueRefs: true, MinValueLen: 1},
		"splices":   {Splices: true, MinSplice: 1},
		"all":       all,
		"notok":     noTok,
		"tiny":      tiny,
		"dict":      dict,
		"full":      {Schema: true, Bare: true, Embedded: true, ValueRefs: true, Splices: true, FullInstructions: true},
		"plain":     {Schema: true, KindNames: true, NoDefaults: true, Bare: true, RawNewlines: true, Splices: true, MinSplice: 1},
	}
}

func parse(tb testing.TB, s string) trace.Value {
	tb.Helper()
	v, err := trace.ParseJSON([]byte(s))
	if err != nil {
		tb.Fatalf("%s: %v", s, err)
	}
	return v
}

// roundTrip checks decode(encode(recs)) gives the same canonical JSON for every record.
func roundTrip(tb testing.TB, name string, recs []trace.Value, opt Options) *Encoded {
	tb.Helper()
	enc, err := EncodeSession("id|with\nodd «chars»", recs, opt)
	if err != nil {
		tb.Fatalf("%s: encode: %v", name, err)
	}
	p := enc.Payload()
	if !isPrintableText(p) {
		tb.Fatalf("%s: payload is not printable UTF-8 text: %q", name, p)
	}
	id, got, err := DecodeSession(p, opt.Dictionary)
	if err != nil {
		tb.Fatalf("%s: decode: %v\npayload:\n%s", name, err, p)
	}
	if id != "id|with\nodd «chars»" {
		tb.Fatalf("%s: id = %q", name, id)
	}
	if len(got) != len(recs) {
		tb.Fatalf("%s: %d records back, want %d", name, len(got), len(recs))
	}
	for i := range recs {
		want, have := trace.Canonical(&recs[i]), trace.Canonical(&got[i])
		if !bytes.Equal(want, have) {
			tb.Fatalf("%s: record %d differs\nwant %s\ngot  %s\npayload:\n%s", name, i, want, have, p)
		}
	}
	return enc
}

func isPrintableText(s string) bool {
	for _, r := range s {
		if r == '\uFFFD' && !strings.Contains(s, "\uFFFD") {
			return false
		}
		if (r < 0x20 && r != '\n') || (r >= 0x7f && r < 0xA0) {
			return false
		}
	}
	return true
}

var adversarial = []string{
	`{"kind":"message","text":"a|b|c ~ $1 %p{} «1.2» «« » \\ \"q\" \u0000 \u001f \t\n\r\b\f","from":"~","to":"$0"}`,
	`{"kind":"message","text":"^1 ^^2 ?? ?123 a^ ^?3 »^ ?^9 end^","from":"^?","to":"?5","meta":{"^7":"??1^"}}`,
	`{"kind":"message","text":"v.a1 .» ..b2 .Z9. .» x.y3 ends in .","from":".c4","to":"a.»","meta":{".k12":".»»."}}`,
	`{"kind":"tool_call","args":"{\"a\": 1, \"b\": [1000.0, -0, 1e400, 12345678901234567890]}","tool":"%j","call_id":"\\"}`,
	`{"kind":"tool_result","result":{"":"","x":[],"y":{},"z":[[]],"n":null,"t":true,"f":false},"text":""}`,
	`{"kind":"final","meta":{"true":"true","false":"null","null":"-1","1":"1e5","$k":"%x","~":"~","a:b":"c,d","sp ":" sp"}}`,
	`{"kind":"weird|kind","from":"x"}`,
	`{"kind":"c","text":"m"}`,
	`{"from":"no kind","kind":1,"text":{"not":"a string"},"extra":[1,2,3],"kind":"message"}`,
	`{"kind":"status","meta":{"ключ":"значение","日本":"語","emoji":"😀 \ud83d\ude00 lone \ud800 \udfff","sep":"\u2028\u2029"}}`,
	`{"kind":"tool_result","result":"[{\"name\":\"ACT\",\"x\":0.5}, {\"name\":\"AFL\"}]","text":"{\n  \"return_type\": \"give_answer\",\n  \"final_answer\": \"Calédonie\"\n}"}`,
	`{"kind":"tool_result","result":"{\"a\": \"\\u00e9\\n\", \"b\": {\"c\": [1, 2]}}","text":"{\"a\":\"é\"}"}`,
	`{"kind":"tool_result","result":"{\"a\": 1,  \"b\": 2}","text":"{ }"}`,
	`{"kind":"message","text":"same same same same same same same same same same same same","meta":{"q":"same same same same same same same same same same same same"}}`,
	`{"kind":"message","text":"$0","args":"$0","result":["$0","%p","~"]}`,
	`{"kind":"message","from":"","to":"","tool":"","call_id":"","text":""}`,
	`{}`,
	`{"kind":"message","kind":"message","from":"a","from":"b"}`,
	`{"meta":1,"args":"1","result":-0.0e+0}`,
	`{"kind":"tool_result","result":"{\"error\": \"\", \"response\": \"[{\\\"id\\\":\\\"EKVF\\\",\\\"name\\\":\\\"EK...","text":"[{\"a\":1}, {\"b\":[1, 2"}`,
	`{"kind":"tool_result","result":"{'a': \"x'y\", 'b': [True, None, -1.5e-05, {}], 'c': '\\x00\\u2028é\\xa0', 'd': 'q\\'\"'}","text":"[{'k': 'v'}, 'x']"}`,
}

func adversarialRecords(tb testing.TB) []trace.Value {
	var recs []trace.Value
	for _, s := range adversarial {
		recs = append(recs, parse(tb, s))
	}
	deep := strings.Repeat(`{"a":[`, 300) + `"x"` + strings.Repeat(`]}`, 300)
	recs = append(recs, parse(tb, `{"kind":"artifact","result":`+deep+`}`))
	deepStr := strings.ReplaceAll(deep, `"`, `\"`)
	recs = append(recs, parse(tb, `{"kind":"artifact","result":"`+deepStr+`"}`))
	big := strings.Repeat("0123456789abcdef «»|~$%\\^?", 1<<20/26)
	bv := trace.Value{Kind: trace.Object, Members: []trace.Member{
		{Key: "kind", Value: trace.StringValue("artifact")},
		{Key: "text", Value: trace.StringValue(big)},
	}}
	recs = append(recs, bv)
	return recs
}

func TestAdversarialRoundTrip(t *testing.T) {
	recs := adversarialRecords(t)
	for name, opt := range configs(t) {
		t.Run(name, func(t *testing.T) {
			roundTrip(t, name, recs, opt)
			// Each record alone too: defaults and references start from nothing.
			for i := range recs[:len(adversarial)] {
				roundTrip(t, name, recs[i:i+1], opt)
			}
		})
	}
}

func TestEmbeddedDetection(t *testing.T) {
	tests := []struct {
		in  string
		tag byte
	}{
		{`{"a":1,"b":"é"}`, 'j'},
		{`{"a":1,"b":"\u00e9"}`, 'a'},
		{`{"a": 1, "b": [true, null]}`, 'p'},
		{`{"a": "é"}`, 'u'},
		{"{\n  \"a\": [\n    1\n  ]\n}", 'i'},
		{`[{"a":1}, {"a":2}]`, 'm'},
		{`{"a":1, "b":2}`, 0}, // mixed member separators: not a style
		{`{"a":1}x`, 0},
		{`{"a":1.0}`, 'j'},
		{`{'id': 'ACT', 'n': 3, 'ok': True, 'x': None, 'l': [1.5, 'it\'s'], "q": "it's"}`, 0}, // "q": not how repr writes a key
		{`{'id': 'ACT', 'n': 3, 'ok': True, 'x': None, 'l': [1.5, "it's"], 'e': 'Calédonie\xa0\n'}`, 'P'},
		{`{'t': (1, 2)}`, 0},
		{`[{'a': 'b'}, {}]`, 'P'},
		{`{"error": "", "response": "[{\"id\":\"EKVF\",\"name\":\"EK...`, 'p'}, // cut short
		{`{"a": [1, 2, {"b": "c\`, 0},                                          // cut inside an escape
	}
	for _, tt := range tests {
		v := parse(t, `"`+strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(tt.in)+`"`)
		_, st, _, ok := detectEmbedded(v.Str, nil)
		switch {
		case tt.tag == 0 && ok:
			t.Errorf("%q detected as %c", tt.in, st.tag)
		case tt.tag != 0 && (!ok || st.tag != tt.tag):
			t.Errorf("%q: want style %c, got ok=%v", tt.in, tt.tag, ok)
		}
	}
}

func loadCorpus(t *testing.T, adapter, dir string) []trace.Session {
	t.Helper()
	p := filepath.Join(corpus, dir)
	if _, err := os.Stat(p); err != nil {
		sharedtest.Absent(t, "shared corpus not present at %s (it lives beside the repository in ../shared): %v", p, err)
	}
	ss, err := trace.Load(context.Background(), adapter, p, trace.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

// TestCorpusRoundTrip is the byte-exact round trip on every record of the shared corpus.
func TestCorpusRoundTrip(t *testing.T) {
	c := mustCounter(t)
	for _, src := range [][2]string{{"toolbench", "toolbench"}, {"openai", "openai"}, {"swe-agent", "swe-agent"}} {
		t.Run(src[0], func(t *testing.T) {
			ss := loadCorpus(t, src[0], src[1])
			for _, opt := range []Options{Default(c), {Schema: true, Embedded: true}} {
				for i := range ss {
					recs := RecordValues(&ss[i])
					if _, bad, err := Verify(ss[i].ID, recs, opt); err != nil || bad != 0 {
						t.Fatalf("%s: %d records differ (%v)", ss[i].ID, bad, err)
					}
				}
			}
		})
	}
}

func TestSyntheticRoundTrip(t *testing.T) {
	c := mustCounter(t)
	for _, s := range trace.Synthetic(11, 20) {
		roundTrip(t, s.ID, RecordValues(&s), Default(c))
	}
}

func TestDeterministic(t *testing.T) {
	c := mustCounter(t)
	recs := RecordValues(&trace.Synthetic(5, 1)[0])
	a, _ := EncodeSession("x", recs, Default(c))
	b, _ := EncodeSession("x", recs, Default(c))
	if a.Payload() != b.Payload() || a.Instructions != b.Instructions {
		t.Fatal("the same session encoded twice gave different payloads")
	}
}

// TestSavesTokens guards the headline mechanisms: on synthetic handoffs the default
// configuration must beat canonical JSON after paying for its instructions.
func TestSavesTokens(t *testing.T) {
	c := mustCounter(t)
	res, err := Measure(context.Background(), Inputs(trace.Synthetic(2, 10)), Default(c), c, "cl100k_base", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Lossless || res.Saving < 0.25 || res.FullCostTokens != res.PayloadTokens+res.InstructionTokens+res.DictionaryTokens {
		t.Fatalf("lossless=%v saving=%.3f full=%d", res.Lossless, res.Saving, res.FullCostTokens)
	}
	base, err := Measure(context.Background(), Inputs(trace.Synthetic(2, 10)), Options{}, c, "cl100k_base", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Canonical lines cost what raw costs, plus the header and the instructions.
	if base.PayloadTokens-base.RawTokens > 6*base.Sessions {
		t.Fatalf("canonical payload %d tokens against raw %d", base.PayloadTokens, base.RawTokens)
	}
}

func TestInstructionsDescribeOnlyUsedFeatures(t *testing.T) {
	recs := []trace.Value{parse(t, `{"kind":"message","text":"hi"}`)}
	enc, _ := EncodeSession("", recs, Options{Schema: true})
	for _, word := range []string{"^", "$k", "%X", "tool_call"} {
		if strings.Contains(enc.Instructions, word) {
			t.Errorf("instructions mention %q for a session that does not use it: %s", word, enc.Instructions)
		}
	}
	full := Instructions(Features{}, true)
	for _, word := range []string{"^", "$k", "%X", "tool_call", "dictionary"} {
		if !strings.Contains(full, word) {
			t.Errorf("full instructions miss %q", word)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, p := range []string{
		"nope\n",
		"a2c/1\nm|«1040\n", // the format before ^ and ? splices
		"a2c/2\nq|x\n",
		"a2c/2\nm|a|b|c|d|e|{unterminated\n",
		"a2c/2\nm||||$7\n",
		"a2c/2\nm|?399\n",
		"a2c/2\nm|^12\n",
		"a2c/2\nm|||||%Q{}\n",
		"a2c/2\nm||||||[1,]\n",
		"a2c/2\nm|\\q\n",
		"a2c/2+d\nm\n",
		"a2c/2+d123456\nm\n",
		"a2c/2+d12345\nm\n",
		"a2c/2+d1234567 id\nm\n",
		"a2c/2+dd\nm\n",
	} {
		if _, _, err := DecodeSession(p, nil); err == nil {
			t.Errorf("DecodeSession(%q) succeeded, want an error", p)
		}
	}
}

func FuzzRoundTrip(f *testing.F) {
	// Seeds: the adversarial records, one per input, and a few malformed ones.
	for _, s := range adversarial {
		f.Add(s, true)
	}
	f.Add(`{"kind":"tool_call","args":"{\"q\": \"x\"}"}`, false)
	f.Add(`{"a":"«««»»»"}`, true)
	f.Add(`{"a":"^^^1??2^?3","b":"^^^1??2^?3 x"}`, true)
	f.Add(`{"kind":"tool_call","from":"agent","to":"t","tool":"t","call_id":"c1","args":"{\"q\": \"«x»\"}"}`, true)
	f.Add(`{"kind":"plan","from":"agent","text":"a: b > c"}`, true)
	c := mustCounter(f)
	f.Fuzz(func(t *testing.T, in string, schema bool) {
		v, err := trace.ParseJSON([]byte(in))
		if err != nil || v.Kind != trace.Object {
			return
		}
		opt := Default(c)
		opt.Schema = schema
		opt.MinSplice = 4
		opt.ValueRefs = true // off by default, still read by every decoder
		// Twice the record: the second copy exercises references and splices. Once as
		// Adapt chooses, once with every mechanism kept, once with kind names and no
		// defaults (Adapt's short-session steps).
		roundTrip(t, "fuzz", []trace.Value{v, v}, opt)
		opt.Adapt = false
		roundTrip(t, "fuzz", []trace.Value{v, v}, opt)
		opt.KindNames, opt.NoDefaults = true, true
		roundTrip(t, "fuzz", []trace.Value{v, v}, opt)
		// Prose lines, where the record has a prose form.
		if ProseFits([]trace.Value{v}) {
			opt.proseLines = true
			roundTrip(t, "fuzz prose", []trace.Value{v, v}, opt)
		}
	})
}

func FuzzDecode(f *testing.F) {
	// A dictionary the decoder is handed whatever the header says: payloads that name it
	// (by its check value), another one, or none reach the same code paths as real ones.
	dict := &Dictionary{Text: "dictionary «text»|\\\nsecond line 12345"}
	f.Add("a2c/2\nm|a|b||x|{k:v}\n")
	f.Add("a2c/2\nr||||^023|$0\n")
	f.Add("a2c/2\nr||||||%j[1,2]\nm||||^0726\n")
	f.Add("a2c/2+d" + dict.Check() + " id\nm||||^1040\nm||||^0930»1\nm||||?1001040\nm||||^^1?x^??\n\n")
	f.Add("a2c/2+d000000\nm||||^1040\n")
	f.Add("a2c/2+d\nm||||^0545\n")
	f.Add("a2c/2\nr||||||~a \"b\" \\| c\nd|~\n")
	f.Add("a2c/2+t id\nplan agent: x\ntool_call agent>t c1: ^0815\ntool_result t>agent c1: ^^\n")
	f.Add("a2c/2+t+d" + dict.Check() + "\nplan agent: ^1040\n")
	f.Add("a2c/2\nm||||ab.b2.»x.z1»7\nm||||.Z40.»»\n")
	f.Add("a2c/2+d" + dict.Check() + "\nm||||.j40.»\n")
	f.Fuzz(func(t *testing.T, p string) {
		// Hostile payloads must fail cleanly, never panic.
		DecodeSession(p, nil)
		_, _, err := DecodeSession(p, dict)
		// A payload that names another dictionary must be refused, never decoded.
		if h, herr := ParseHeader(strings.SplitN(p, "\n", 2)[0]); herr == nil && h.Dict && h.Check != "" && h.Check != dict.Check() {
			var de *DictionaryError
			if !errors.As(err, &de) {
				t.Fatalf("payload naming dictionary %s decoded with %s: %v", h.Check, dict.Check(), err)
			}
		}
	})
}

func benchSessions(b *testing.B) ([]Input, int) {
	ss := trace.Synthetic(9, 30)
	if p := filepath.Join(corpus, "openai"); dirExists(p) {
		if real, err := trace.Load(context.Background(), "openai", p, trace.LoadOptions{}); err == nil {
			ss = real[:20]
		}
	}
	in := Inputs(ss)
	n := 0
	for _, s := range in {
		for i := range s.Records {
			n += len(trace.Canonical(&s.Records[i]))
		}
	}
	return in, n
}

func dirExists(p string) bool { st, err := os.Stat(p); return err == nil && st.IsDir() }

func BenchmarkEncode(b *testing.B) {
	in, n := benchSessions(b)
	opt := Default(mustCounter(b))
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range in {
			if _, err := EncodeSession("", s.Records, opt); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	in, n := benchSessions(b)
	opt := Default(mustCounter(b))
	var payloads []string
	for _, s := range in {
		e, _ := EncodeSession("", s.Records, opt)
		payloads = append(payloads, e.Payload())
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range payloads {
			if _, _, err := DecodeSession(p, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestMeasureFoldsNeverTrainsOnTheSessionItEncodes: a string shared only by the two
// sessions of one fold cannot reach the dictionary that fold is encoded with.
func TestMeasureFoldsNeverTrainsOnTheSessionItEncodes(t *testing.T) {
	c := mustCounter(t)
	mk := func(id, s string) Input {
		return Input{ID: id, Records: []trace.Value{parse(t, `{"kind":"message","text":"`+s+`"}`)}}
	}
	x := strings.Repeat("only the even sessions say this; ", 8)
	y := strings.Repeat("only the odd sessions say that. ", 8)
	in := []Input{mk("0", x), mk("1", y), mk("2", x), mk("3", y)}
	res, err := MeasureFolds(context.Background(), in, Default(c), c, "cl100k_base", nil, 2, TrainOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Lossless || res.DictionaryFolds != 2 {
		t.Fatalf("lossless %v folds %d", res.Lossless, res.DictionaryFolds)
	}
	// Each fold's dictionary holds the other fold's sentence, which this fold never
	// uses, so no session may use a dictionary and none is charged.
	if res.DictionaryTokens != 0 {
		t.Fatalf("a fold used a dictionary learned from itself: %d dictionary tokens", res.DictionaryTokens)
	}
	if res.FullCostTokens != res.PayloadTokens+res.InstructionTokens {
		t.Fatalf("full %d != payload %d + instructions %d", res.FullCostTokens, res.PayloadTokens, res.InstructionTokens)
	}
	d := Train([][]trace.Value{in[0].Records, in[2].Records}, TrainOptions{})
	if !strings.Contains(d.Text, "even sessions") || strings.Contains(d.Text, "odd sessions") {
		t.Fatalf("dictionary learned the wrong text: %q", d.Text)
	}
}

// TestFixturesRoundTrip runs everywhere: the trace package's fixtures (real ToolBench,
// tau-bench and SWE-agent traces) must round-trip byte for byte under every option mix.
func TestFixturesRoundTrip(t *testing.T) {
	for _, a := range []string{"toolbench", "openai", "swe-agent"} {
		ss, err := trace.Load(context.Background(), a, filepath.Join("..", "trace", "testdata", a), trace.LoadOptions{})
		if err != nil || len(ss) == 0 {
			t.Fatalf("%s: %d sessions, %v", a, len(ss), err)
		}
		for name, opt := range configs(t) {
			for i := range ss {
				roundTrip(t, a+"/"+name, RecordValues(&ss[i]), opt)
			}
		}
	}
}

// A message that quotes a tool result's JSON verbatim splices it from the originals,
// although the payload held the result as %X; so does a second quote with a newline.
func TestOriginals(t *testing.T) {
	res := `{"ok": true, "items": [{"id": 13481, "file": "ingest/model.go", "line": 231, "state": "ok", "note": "the cache key ignores the tenant"}, {"id": 3372, "file": "ingest/api.go", "line": 153, "state": "failed", "note": "an error is swallowed | escaped \\ here"}], "elapsed_ms": 168.5}`
	q, _ := json.Marshal(res)
	quote, _ := json.Marshal("Step 2: the tool returned " + res + ", so\nnext: " + res[:90] + " «» done")
	recs := []trace.Value{
		parse(t, `{"kind":"tool_result","from":"tool","to":"builder","result":`+string(q)+`}`),
		parse(t, `{"kind":"message","from":"builder","to":"planner","text":`+string(quote)+`}`),
	}
	opt := Default(mustCounter(t))
	opt.Adapt = false // two records: Adapt would rightly find the schema not worth explaining
	enc := roundTrip(t, "originals", recs, opt)
	if !enc.Features.Originals || !strings.Contains(enc.Instructions, "%X strings") {
		t.Fatalf("the quote did not use the originals:\n%s", enc.Payload())
	}
	// A splice may run from the originals on into the session text.
	for _, p := range []string{
		"a2c/2\nr||||||%j[1,2]\nm||||^0626\n",
		"a2c/2\nr||||||%j[1,2]\nm||||^0726\n",
	} {
		if _, recs, err := DecodeSession(p, nil); err != nil || len(recs) != 2 {
			t.Errorf("DecodeSession(%q): %v", p, err)
		}
	}
	if _, _, err := DecodeSession("a2c/2\nr||||||%j[1,2]\nm||||^0627\n", nil); err == nil {
		t.Error("a splice before the originals decoded")
	}
}

// TestAdaptNeverCostsMore checks Adapt against its own baseline, counted here: on every
// short session its payload + instructions are at most what Default without Adapt
// ships, and it round-trips.
func TestAdaptNeverCostsMore(t *testing.T) {
	c := mustCounter(t)
	fixed := Default(c)
	fixed.Adapt = false
	dropped := 0
	for _, s := range append(trace.SyntheticReAct(4, 20), trace.Synthetic(4, 5)...) {
		recs := RecordValues(&s)
		a := roundTrip(t, s.ID, recs, Default(c))
		b := roundTrip(t, s.ID, recs, fixed)
		ca := c.Count(a.Payload()) + c.Count(a.Instructions)
		cb := c.Count(b.Payload()) + c.Count(b.Instructions)
		if ca > cb {
			t.Errorf("%s: adapted %d tokens > fixed %d", s.ID, ca, cb)
		}
		if ca < cb {
			dropped++
		}
	}
	if dropped == 0 {
		t.Error("Adapt changed no session of 20 short ReAct ones")
	}
}

// TestNoDefaults: with NoDefaults no field stands for its default, so the instructions do
// not explain defaults, and the session still round-trips.
func TestNoDefaults(t *testing.T) {
	s := trace.SyntheticReAct(6, 1)[0]
	opt := Options{Schema: true, NoDefaults: true}
	enc := roundTrip(t, s.ID, RecordValues(&s), opt)
	if enc.Features.Defaults || strings.Contains(enc.Instructions, "Blank") {
		t.Fatalf("defaults used or explained: %s\n%s", enc.Instructions, enc.Payload())
	}
	opt.NoDefaults = false
	if enc := roundTrip(t, s.ID, RecordValues(&s), opt); !enc.Features.Defaults {
		t.Fatal("the same session without NoDefaults uses no default: the test proves nothing")
	}
}

// TestSpliceFormsByHand decodes the three splice forms and the escapes against the same
// lines written out by hand: .j16 is 10 bytes (j) from 16 back, ^1027 10 bytes from 27
// back, .» a literal . and .a1 one byte from 1 back (the . just written).
func TestSpliceFormsByHand(t *testing.T) {
	spliced := "a2c/2\nm||||abcdefghij\nm||||.j16-^1027.».a1x ^^1 ??2 .»»\n"
	literal := "a2c/2\nm||||abcdefghij\nm||||abcdefghij-abcdefghij..x ^^1 ??2 .»»\n"
	_, got, err := DecodeSession(spliced, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, want, err := DecodeSession(literal, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(want) != 2 {
		t.Fatalf("%d and %d records", len(got), len(want))
	}
	for i := range want {
		if g, w := trace.Canonical(&got[i]), trace.Canonical(&want[i]); !bytes.Equal(g, w) {
			t.Errorf("record %d: %s, want %s", i+1, g, w)
		}
	}
	if s := string(trace.Canonical(&got[1])); !strings.Contains(s, `abcdefghij-abcdefghij..x ^1 ?2 .»`) {
		t.Errorf("second record %s", s)
	}
	// A splice that reaches before the text, and a letter splice with no distance.
	for _, p := range []string{"a2c/2\nm||||.z99\n", "a2c/2\nm||||x.a0\n"} {
		if _, _, err := DecodeSession(p, nil); err == nil {
			t.Errorf("DecodeSession(%q) succeeded", p)
		}
	}
}
