package a2c

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parleyhq/parley/bpe"
	"github.com/parleyhq/parley/trace"
)

// dictSessions returns synthetic sessions and a dictionary trained on other ones, so that
// encoding them splices into the dictionary.
func dictSessions(t *testing.T) ([]Input, *Dictionary) {
	t.Helper()
	var train [][]trace.Value
	for _, s := range Inputs(trace.Synthetic(1, 20)) {
		train = append(train, s.Records)
	}
	d := Train(train, TrainOptions{})
	if d.Text == "" {
		t.Fatal("training learned nothing")
	}
	return Inputs(trace.Synthetic(2, 6)), d
}

func TestDictionaryCheck(t *testing.T) {
	// The check value is part of the wire format: these must never change (they agree with
	// an independent SHA-256: first 8 bytes, big-endian, modulo 10^6).
	for text, want := range map[string]string{
		"":                       "261652",
		"hello\nworld":           "684867",
		`{"kind":"plan"}` + "\n": "105000",
	} {
		if got := (&Dictionary{Text: text}).Check(); got != want {
			t.Errorf("Check(%q) = %s, want %s", text, got, want)
		}
	}
	a := &Dictionary{Text: strings.Repeat("boilerplate line\n", 50)}
	b := &Dictionary{Text: a.Text + " "}
	if len(a.Check()) != CheckLen || a.Check() == b.Check() {
		t.Errorf("checks %q and %q: want %d digits, different for different texts", a.Check(), b.Check(), CheckLen)
	}
}

func TestDictionaryRightOneDecodes(t *testing.T) {
	in, d := dictSessions(t)
	opt := Default(mustCounter(t))
	opt.Dictionary = d
	// The decoder's copy comes from a file, as it would on the receiving side.
	path := filepath.Join(t.TempDir(), "d.dict")
	if err := d.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadDictionary(path)
	if err != nil {
		t.Fatal(err)
	}
	used := 0
	for _, s := range in {
		enc, err := EncodeSession(s.ID, s.Records, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !enc.UsesDict {
			if strings.Contains(enc.Header, "+d") {
				t.Errorf("%s: header %q names a dictionary the payload does not use", s.ID, enc.Header)
			}
			continue
		}
		used++
		if want := Magic + "+d" + d.Check() + " "; !strings.HasPrefix(enc.Header, want) {
			t.Errorf("header %q, want it to start with %q", enc.Header, want)
		}
		id, got, err := DecodeSession(enc.Payload(), loaded)
		if err != nil || id != s.ID || len(got) != len(s.Records) {
			t.Fatalf("%s: decode: id %q, %d records, %v", s.ID, id, len(got), err)
		}
		for i := range got {
			if !bytes.Equal(trace.Canonical(&got[i]), trace.Canonical(&s.Records[i])) {
				t.Fatalf("%s: record %d differs", s.ID, i)
			}
		}
	}
	if used == 0 {
		t.Fatal("no session used the dictionary: the test proves nothing")
	}
}

func TestDictionaryWrongOneRefused(t *testing.T) {
	in, d := dictSessions(t)
	opt := Default(mustCounter(t))
	opt.Dictionary = d
	var payload string
	for _, s := range in {
		if enc, _ := EncodeSession("s", s.Records, opt); enc.UsesDict {
			payload = enc.Payload()
			break
		}
	}
	if payload == "" {
		t.Fatal("no session used the dictionary")
	}
	others := map[string]*Dictionary{
		"another dictionary":        {Text: "some other boilerplate\nentirely"},
		"one byte more":             {Text: d.Text + "\n"},
		"one byte less":             {Text: d.Text[:len(d.Text)-1]},
		"the same text edited":      {Text: strings.Replace(d.Text, "a", "b", 1)},
		"an empty dictionary":       {Text: ""},
		"a dictionary from 'train'": Train([][]trace.Value{in[0].Records, in[1].Records, in[2].Records}, TrainOptions{MinShare: 0.5}),
	}
	for name, other := range others {
		t.Run(name, func(t *testing.T) {
			if other.Text == d.Text {
				t.Skip("trained the same dictionary")
			}
			id, recs, err := DecodeSession(payload, other)
			var de *DictionaryError
			if !errors.As(err, &de) {
				t.Fatalf("decoded with the wrong dictionary: %d records, err %v", len(recs), err)
			}
			if de.Want != d.Check() || de.Got != other.Check() || recs != nil || id != "s" {
				t.Errorf("error %+v, records %v, id %q; want Want %s Got %s, no records, id s", de, recs, id, d.Check(), other.Check())
			}
			if msg := err.Error(); !strings.Contains(msg, d.Check()) || !strings.Contains(msg, other.Check()) {
				t.Errorf("the error does not name both dictionaries: %s", msg)
			}
		})
	}
	t.Run("none", func(t *testing.T) {
		_, _, err := DecodeSession(payload, nil)
		var de *DictionaryError
		if !errors.As(err, &de) || de.Want != d.Check() || de.Got != "" || !strings.Contains(err.Error(), d.Check()) {
			t.Fatalf("err %v, want a DictionaryError naming %s", err, d.Check())
		}
	})
	// A payload written before check values (bare +d) decodes with the dictionary given.
	t.Run("legacy bare +d", func(t *testing.T) {
		legacy := strings.Replace(payload, "+d"+d.Check(), "+d", 1)
		if _, recs, err := DecodeSession(legacy, d); err != nil || len(recs) == 0 {
			t.Fatalf("legacy payload: %v", err)
		}
		var de *DictionaryError
		if _, _, err := DecodeSession(legacy, nil); !errors.As(err, &de) || de.Want != "" {
			t.Fatalf("legacy payload without a dictionary: %v", err)
		}
	})
}

// TestNoDictionaryPayloadsUnchanged: a payload that uses no dictionary has the header it
// always had, whether or not a dictionary was offered.
func TestNoDictionaryPayloadsUnchanged(t *testing.T) {
	recs := []trace.Value{parse(t, `{"kind":"message","text":"hi"}`)}
	for _, d := range []*Dictionary{nil, {Text: "nothing this session says, at any length at all"}} {
		opt := Default(mustCounter(t))
		opt.Dictionary = d
		for id, want := range map[string]string{"": "a2c/2\n", "x y": "a2c/2 x y\n"} {
			enc, err := EncodeSession(id, recs, opt)
			if err != nil {
				t.Fatal(err)
			}
			if got := enc.Payload(); !strings.HasPrefix(got, want) || enc.UsesDict {
				t.Errorf("payload %q, want it to start with %q", got, want)
			}
		}
	}
}

func TestParseHeader(t *testing.T) {
	ok := []struct {
		line string
		want PayloadHeader
	}{
		{"a2c/2", PayloadHeader{}},
		{"a2c/2 s|1", PayloadHeader{ID: "s|1"}},
		{`a2c/2 a\|b\nc`, PayloadHeader{ID: "a|b\nc"}},
		{"a2c/2 123456", PayloadHeader{ID: "123456"}},
		{"a2c/2+d", PayloadHeader{Dict: true}},
		{"a2c/2+d id", PayloadHeader{ID: "id", Dict: true}},
		{"a2c/2+d000042", PayloadHeader{Dict: true, Check: "000042"}},
		{"a2c/2+d123456 7 8", PayloadHeader{ID: "7 8", Dict: true, Check: "123456"}},
	}
	for _, tt := range ok {
		h, err := ParseHeader(tt.line)
		if err != nil || h != tt.want {
			t.Errorf("ParseHeader(%q) = %+v, %v; want %+v", tt.line, h, err, tt.want)
		}
		if _, err := ParseHeader(h.String()); err != nil {
			t.Errorf("ParseHeader(%q.String() = %q): %v", tt.line, h.String(), err)
		}
		if h2, _ := ParseHeader(h.String()); h2 != h {
			t.Errorf("%q: String and ParseHeader disagree: %+v then %+v", tt.line, h, h2)
		}
	}
	for _, line := range []string{
		"", "a2c/3", "a2c/1", "a2c/2x", "a2c/2+", "a2c/2+dx", "a2c/2+d12345", "a2c/2+d1234567",
		"a2c/2+d123456x", "a2c/2+d123456+d", "a2c/2+d 12 \\q",
	} {
		if h, err := ParseHeader(line); err == nil {
			t.Errorf("ParseHeader(%q) = %+v, want an error", line, h)
		}
	}
}

// TestDictionaryCheckCostsTwoTokens: the check value adds exactly two tokens to a header,
// whatever its digits, with either tokenizer (the figure doc.go states).
func TestDictionaryCheckCostsTwoTokens(t *testing.T) {
	for _, name := range []string{"cl100k_base", "o200k_base"} {
		enc, err := bpe.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 200 {
			check := (&Dictionary{Text: strings.Repeat("x", i)}).Check()
			for _, id := range []string{"", "session-7", "9 lives"} {
				bare := PayloadHeader{ID: id, Dict: true}.String()
				full := PayloadHeader{ID: id, Dict: true, Check: check}.String()
				if d := enc.Count(full) - enc.Count(bare); d != 2 {
					t.Fatalf("%s: %q costs %d tokens more than %q, want 2", name, full, d, bare)
				}
			}
		}
	}
}

func TestDictionaryFile(t *testing.T) {
	for _, text := range []string{"", "one line", "ends in a newline\n", "a\n\nb", "«»|\\ é"} {
		var buf bytes.Buffer
		d := &Dictionary{Text: text}
		n, err := d.WriteTo(&buf)
		if err != nil || n != int64(buf.Len()) || buf.String() != text+"\n" {
			t.Fatalf("WriteTo(%q): %d bytes %q, %v", text, n, buf.String(), err)
		}
		back, err := ReadDictionary(&buf)
		if err != nil || back.Text != text || back.Check() != d.Check() {
			t.Errorf("ReadDictionary(WriteTo(%q)) = %q, %v", text, back.Text, err)
		}
	}
	// A file written by hand without a final newline is read whole.
	if d, _ := ReadDictionary(strings.NewReader("no newline")); d.Text != "no newline" {
		t.Errorf("got %q", d.Text)
	}
	dir := t.TempDir()
	if _, err := LoadDictionary(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadDictionary of a missing file: %v", err)
	}
	if err := (&Dictionary{Text: "x"}).WriteFile(filepath.Join(dir, "no", "such", "dir")); err == nil {
		t.Error("WriteFile into a missing directory succeeded")
	}
	p := filepath.Join(dir, "d")
	os.WriteFile(p, []byte("old and longer text\n"), 0o600)
	if err := (&Dictionary{Text: "new"}).WriteFile(p); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new\n" {
		t.Errorf("WriteFile left %q", b)
	}
}

// rec builds a record from alternating keys and string values.
func rec(kv ...string) trace.Value {
	v := trace.Value{Kind: trace.Object}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Members = append(v.Members, trace.Member{Key: kv[i], Value: trace.Value{Kind: trace.String, Str: kv[i+1]}})
	}
	return v
}

// TestTrainPrunesWhatDoesNotPay: a line every session holds stays in the dictionary; a
// line only two of ten hold is learned (MinShare 0.2) but its two splices save less than
// three times its own tokens, so pruning drops it.
func TestTrainPrunesWhatDoesNotPay(t *testing.T) {
	common := "Every session begins with this long boilerplate sentence about the rules of the task."
	rare := "Only two sessions quote this other sentence, which is about forty bytes long."
	var sessions [][]trace.Value
	for i := range 10 {
		text := common + "\nquestion " + strings.Repeat("x", i+1)
		if i < 2 {
			text += "\n" + rare
		}
		sessions = append(sessions, []trace.Value{rec("kind", "message", "from", "user", "text", text)})
	}
	topt := TrainOptions{MinShare: 0.2}
	whole := Train(sessions, topt)
	if !strings.Contains(whole.Text, common) || !strings.Contains(whole.Text, rare) {
		t.Fatalf("without pruning both lines should be learned: %q", whole.Text)
	}
	topt.Counter = mustCounter(t)
	pruned := Train(sessions, topt)
	if !strings.Contains(pruned.Text, common) {
		t.Errorf("pruning dropped the line every session copies: %q", pruned.Text)
	}
	if strings.Contains(pruned.Text, "forty bytes") {
		t.Errorf("pruning kept the line only two sessions copy: %q", pruned.Text)
	}
}

// TestTrainLearnsFrequentRuns: records that share a frame around a value that differs
// (a tool call's arguments with the query changing) give the dictionary the frame as
// the payload writes it, which neither a string line nor a whole value holds.
func TestTrainLearnsFrequentRuns(t *testing.T) {
	queries := []string{"weather in Lisbon tomorrow morning", "cheapest flights from Oslo to Rome", "who wrote The Master and Margarita",
		"distance between Mars and Jupiter now", "recipe for a vegan mushroom risotto", "opening hours of the Prado museum"}
	var sessions [][]trace.Value
	for _, q := range queries {
		args := `{"query": "` + q + `", "limit_results_to": 10, "language_of_results": "en"}`
		r := rec("kind", "tool_call", "from", "assistant", "to", "search")
		r.Members = append(r.Members, trace.Member{Key: "args", Value: mustParse(t, args)})
		sessions = append(sessions, []trace.Value{r})
	}
	frame := "limit_results_to:10,language_of_results:en}"
	if d := Train(sessions, TrainOptions{}); !strings.Contains(d.Text, frame) {
		t.Errorf("the dictionary lacks the shared frame %q: %q", frame, d.Text)
	}
	if d := Train(sessions, TrainOptions{NoFrequent: true}); strings.Contains(d.Text, frame) {
		t.Errorf("without frequent runs the frame %q should not be learned: %q", frame, d.Text)
	}
}

func mustParse(t *testing.T, s string) trace.Value {
	t.Helper()
	v, err := trace.ParseJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestPackedDictionaryUnpacks: the dictionary as it ships (Packed) is shorter where the
// text repeats itself, and UnpackDictionary gives back the text byte for byte, escapes
// included; a text with nothing to copy ships as itself.
func TestPackedDictionaryUnpacks(t *testing.T) {
	rep := `{name:Finish,description:"Call this function at the end of your try",parameters:{type:object,properties:{return_type:{type:string,enum:[give_answer,give_up_and_restart]}}}}`
	for _, tc := range []struct {
		text    string
		spliced bool
	}{
		{"", false},
		{"one line, nothing twice", false},
		{rep + "\n" + strings.Replace(rep, "your try", "the task", 1), true},
		{"v.a1 ^12 ??3 .» x.Z9 " + strings.Repeat("a.b1^^2?x ", 6), true},
	} {
		d := &Dictionary{Text: tc.text}
		p, spliced := d.Packed()
		if spliced != tc.spliced {
			t.Errorf("%q: spliced %v, want %v (packed %q)", tc.text, spliced, tc.spliced, p)
		}
		if spliced && len(p) >= len(tc.text) {
			t.Errorf("%q: packed %d bytes, the text %d", tc.text, len(p), len(tc.text))
		}
		if !spliced && !strings.ContainsAny(tc.text, ".^?") && p != tc.text {
			t.Errorf("%q: packed %q without a splice", tc.text, p)
		}
		got, err := UnpackDictionary(p)
		if err != nil || got.Text != tc.text {
			t.Errorf("%q: unpacked %v %v", tc.text, got, err)
		}
	}
}

func FuzzPackedDictionary(f *testing.F) {
	f.Add("v.a1 ^12 ??3 .» x.Z9 abcdefghijklmnop abcdefghijklmnop")
	f.Add(strings.Repeat("0123456789.»^?", 9))
	f.Fuzz(func(t *testing.T, text string) {
		d := &Dictionary{Text: text}
		p, _ := d.Packed()
		got, err := UnpackDictionary(p)
		if err != nil || got.Text != text {
			t.Fatalf("%q packed to %q, unpacked to %v (%v)", text, p, got, err)
		}
	})
}
