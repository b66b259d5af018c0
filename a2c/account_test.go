package a2c

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/parleyhq/parley/bpe"
	"github.com/parleyhq/parley/trace"
)

// recount checks one measured session against the texts a reader receives: the payload is
// rebuilt here from the header and lines (each ending in a newline) and must decode to
// the records, and every token field must be the count of its text, made by a bpe
// encoding of its own.
func recount(t *testing.T, tok *bpe.Encoding, s Input, opt Options, sr SessionResult, dictShare int) {
	t.Helper()
	enc, err := EncodeSession("", s.Records, opt)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(enc.Header + "\n")
	for _, l := range enc.Lines {
		b.WriteString(l + "\n")
	}
	shipped := b.String()
	// The dictionary ships packed: the reader rebuilds it from that text, and the
	// payload must decode with what it rebuilt.
	var dict *Dictionary
	packed := ""
	if enc.UsesDict {
		packed, _ = opt.Dictionary.Packed()
		d, err := UnpackDictionary(packed)
		if err != nil || d.Text != opt.Dictionary.Text {
			t.Fatalf("%s: the shipped dictionary does not unpack to the dictionary (%v)", s.ID, err)
		}
		dict = d
	}
	if _, got, err := DecodeSession(shipped, dict); err != nil || len(got) != len(s.Records) {
		t.Fatalf("%s: the text counted is not what decodes (%v, %d records)", s.ID, err, len(got))
	}
	raw := 0
	for i := range s.Records {
		raw += tok.Count(string(trace.Canonical(&s.Records[i])))
	}
	wantDict := 0
	if enc.UsesDict {
		wantDict = dictShare
	}
	want := SessionResult{ID: s.ID, Handoffs: len(s.Records), RawTokens: raw, PayloadTokens: tok.Count(shipped),
		InstructionTokens: tok.Count(enc.Instructions), DictionaryTokens: wantDict}
	want.FullCostTokens = want.PayloadTokens + want.InstructionTokens + want.DictionaryTokens
	got := sr
	got.BreakEven, got.Lossless, got.Baselines = 0, false, nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: measured %+v, recounted from the shipped text %+v", s.ID, got, want)
	}
	sh := Ship(s.ID, enc, opt.Dictionary, tok)
	if sh.Payload != shipped || sh.PayloadTokens != want.PayloadTokens || sh.InstructionTokens != want.InstructionTokens ||
		(enc.UsesDict && (sh.Dictionary != packed || sh.DictionaryTokens != tok.Count(packed))) ||
		sh.FullCostTokens != sh.PayloadTokens+sh.InstructionTokens+sh.DictionaryTokens {
		t.Fatalf("%s: Ship disagrees with the recount: %+v", s.ID, sh)
	}
}

// TestMeasureCountsWhatShips recounts every field of every session of the shared corpora
// (and the synthetic one) from the shipped texts, with and without a dictionary.
func TestMeasureCountsWhatShips(t *testing.T) {
	c := mustCounter(t)
	tok, err := bpe.Get("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	sources := map[string][]trace.Session{"synthetic": trace.Synthetic(3, 12)}
	for _, a := range []string{"toolbench", "openai", "swe-agent"} {
		t.Run("load-"+a, func(t *testing.T) { sources[a] = loadCorpus(t, a, a) })
	}
	for name, ss := range sources {
		t.Run(name, func(t *testing.T) {
			in := Inputs(ss)
			plain := Default(c)
			res, err := Measure(context.Background(), in, plain, c, "cl100k_base", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			sum := 0
			for i := range in {
				recount(t, tok, in[i], plain, res.PerSession[i], 0)
				sum += res.PerSession[i].PayloadTokens
			}
			if sum != res.PayloadTokens || res.FullCostTokens != res.PayloadTokens+res.InstructionTokens {
				t.Fatalf("totals: payload %d, per-session sum %d", res.PayloadTokens, sum)
			}
			// A dictionary learned on the odd sessions, charged in full to every even one
			// that uses it.
			var train [][]trace.Value
			var test []Input
			for i := range in {
				if i%2 == 1 {
					train = append(train, in[i].Records)
				} else {
					test = append(test, in[i])
				}
			}
			withDict := Default(c)
			withDict.Dictionary = Train(train, TrainOptions{})
			withDict.DictCharge = DictPerSession
			res, err = Measure(context.Background(), test, withDict, c, "cl100k_base", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := range test {
				packed, _ := withDict.Dictionary.Packed()
				recount(t, tok, test[i], withDict, res.PerSession[i], tok.Count(packed))
			}
		})
	}
}
