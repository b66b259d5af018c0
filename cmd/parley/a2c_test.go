package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parleyhq/parley/a2c"
	"github.com/parleyhq/parley/bpe"
	"github.com/parleyhq/parley/internal/sharedtest"
)

func TestA2CNormalizeEncodeDecode(t *testing.T) {
	code, norm, errs := runParley(t, "", "a2c", "normalize", "--adapter", "synthetic", "--seed", "4", "--sessions", "3")
	if code != 0 || strings.Count(norm, "\n") != 3 {
		t.Fatalf("normalize: code %d, %d lines, stderr %q", code, strings.Count(norm, "\n"), errs)
	}
	code, payload, errs := runParley(t, norm, "a2c", "encode")
	if code != 0 || strings.Count(payload, "a2c/2 synthetic/4/") != 3 {
		t.Fatalf("encode: code %d, stderr %q, payload:\n%s", code, errs, payload)
	}
	code, back, errs := runParley(t, payload, "a2c", "decode")
	if code != 0 || back != norm {
		t.Fatalf("decode: code %d, stderr %q; decode(encode(x)) != x", code, errs)
	}
}

func TestA2CEncodeRecordLines(t *testing.T) {
	in := `{"kind":"message","text":"hi"}` + "\n" + `{"weird":[1.50,"x"]}` + "\n"
	code, payload, _ := runParley(t, in, "a2c", "encode")
	if code != 0 {
		t.Fatal(code)
	}
	code, back, _ := runParley(t, payload, "a2c", "decode")
	want := `{"id":"stdin","records":[{"kind":"message","text":"hi"},{"weird":[1.50,"x"]}]}` + "\n"
	if code != 0 || back != want {
		t.Fatalf("got %q, want %q", back, want)
	}
}

// TestA2CDecodeOtherInput: input that is no a2c/2 payload is refused with exit 1, a payload of
// the older a2c/1 with the header parser's word on it (encode again), anything else plainly.
func TestA2CDecodeOtherInput(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a2c/1 s\n{from:a,kind:plan,text:hi,to:b}\n", "an a2c/1 payload"},
		{"a2c/9 s\n{}\n", `header must start with "a2c/2"`},
		{"hello\n", "input does not start with an a2c/2 header"},
	} {
		code, out, errs := runParley(t, tc.in, "a2c", "decode")
		if code != 1 || out != "" || !strings.Contains(errs, tc.want) {
			t.Errorf("decode %q: exit %d, stdout %q, stderr %q; want exit 1 and %q", tc.in, code, out, errs, tc.want)
		}
	}
}

func TestA2CVerifyAndBenchmarkSynthetic(t *testing.T) {
	code, out, errs := runParley(t, "", "a2c", "verify", "--adapter", "synthetic", "--sessions", "5")
	if code != 0 || !strings.Contains(out, "differing 0") {
		t.Fatalf("verify: code %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, errs = runParley(t, "", "a2c", "benchmark", "--adapter", "synthetic", "--sessions", "5", "--json")
	if code != 0 {
		t.Fatalf("benchmark: code %d, stderr %q", code, errs)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"encoding", "sessions", "handoffs", "raw_tokens", "payload_tokens", "instruction_tokens",
		"dictionary_tokens", "full_cost_tokens", "saving", "median_break_even", "never_break_even", "lossless", "baselines"} {
		if _, ok := res[k]; !ok {
			t.Errorf("benchmark --json lacks %q", k)
		}
	}
	full := res["payload_tokens"].(float64) + res["instruction_tokens"].(float64) + res["dictionary_tokens"].(float64)
	if full != res["full_cost_tokens"].(float64) || res["lossless"] != true {
		t.Fatalf("full cost %v != parts %v, lossless %v", res["full_cost_tokens"], full, res["lossless"])
	}
	bl := res["baselines"].(map[string]any)
	for _, k := range []string{"minified_json", "pretty_json", "toon"} {
		if _, ok := bl[k]; !ok {
			t.Errorf("no %s baseline", k)
		}
	}
	code, out, _ = runParley(t, "", "a2c", "benchmark", "--adapter", "synthetic", "--sessions", "5")
	if code != 0 || !strings.Contains(out, "full cost") || !strings.Contains(out, "median break-even") {
		t.Fatalf("table: code %d\n%s", code, out)
	}
}

func TestA2CTrainAndDict(t *testing.T) {
	dict := filepath.Join(t.TempDir(), "d.txt")
	code, _, errs := runParley(t, "", "a2c", "train", "--adapter", "synthetic", "--seed", "1", "--sessions", "10", "--output", dict)
	if code != 0 {
		t.Fatalf("train: %d %s", code, errs)
	}
	if b, err := os.ReadFile(dict); err != nil || len(b) == 0 {
		t.Fatalf("dictionary file: %v", err)
	}
	code, out, errs := runParley(t, "", "a2c", "verify", "--adapter", "synthetic", "--seed", "2", "--sessions", "5", "--dict", dict)
	if code != 0 || !strings.Contains(out, "differing 0") {
		t.Fatalf("verify --dict: %d %q %q", code, out, errs)
	}
	// The payloads name their dictionary: decoding with it round-trips, with another one
	// or none is refused.
	_, norm, _ := runParley(t, "", "a2c", "normalize", "--adapter", "synthetic", "--seed", "2", "--sessions", "5")
	code, payload, errs := runParley(t, norm, "a2c", "encode", "--dict", dict)
	if code != 0 || !strings.Contains(payload, "a2c/2+d") {
		t.Fatalf("encode --dict: %d %q, no payload uses the dictionary:\n%s", code, errs, payload)
	}
	if code, back, errs := runParley(t, payload, "a2c", "decode", "--dict", dict); code != 0 || back != norm {
		t.Fatalf("decode --dict: %d %q; decode(encode(x)) != x", code, errs)
	}
	other := filepath.Join(t.TempDir(), "other.txt")
	os.WriteFile(other, []byte("another dictionary\n"), 0o644)
	if code, _, errs := runParley(t, payload, "a2c", "decode", "--dict", other); code != 1 || !strings.Contains(errs, "not with the one given") {
		t.Fatalf("decode with another dictionary: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := runParley(t, payload, "a2c", "decode"); code != 1 || !strings.Contains(errs, "pass it (--dict)") {
		t.Fatalf("decode without the dictionary: exit %d, stderr %q", code, errs)
	}
}

func TestA2CUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"a2c"},
		{"a2c", "frobnicate"},
		{"a2c", "verify"},
		{"a2c", "verify", "--adapter", "toolbench"},
		{"a2c", "benchmark", "--adapter", "nope", "--source", "x"},
		{"a2c", "benchmark", "--adapter", "synthetic", "--encoding", "p50k"},
	} {
		if code, _, _ := runParley(t, "", args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if code, out, _ := runParley(t, "", "a2c", "benchmark", "--help"); code != 0 || !strings.Contains(out, "Break-even") {
		t.Errorf("--help: %d %q", code, out)
	}
	if code, _, _ := runParley(t, "garbage\n", "a2c", "decode"); code != 1 {
		t.Errorf("decode garbage: exit %d, want 1", code)
	}
}

// TestA2CVerifyCorpus runs the command on every shared corpus source.
func TestA2CVerifyCorpus(t *testing.T) {
	for _, a := range []string{"toolbench", "openai", "swe-agent"} {
		dir := filepath.Join("..", "..", "..", "shared", "corpus", a)
		if _, err := os.Stat(dir); err != nil {
			sharedtest.Absent(t, "shared corpus not present at %s: %v", dir, err)
		}
		code, out, errs := runParley(t, "", "a2c", "verify", "--adapter", a, "--source", dir)
		if code != 0 || !strings.Contains(out, "differing 0") {
			t.Errorf("%s: code %d %q %q", a, code, out, errs)
		}
	}
}

func TestA2COptimizeAndCheck(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rel")
	code, out, errs := runParley(t, "", "a2c", "optimize", "--adapter", "synthetic", "--seed", "3", "--sessions", "10", "--retest", "5", "--output", dir)
	if code != 0 || !strings.Contains(out, "verdict") {
		t.Fatalf("optimize: code %d\n%s\n%s", code, out, errs)
	}
	for _, f := range []string{"report.md", "results.json", "protocol.json", "manifest.json", "full-cost.svg", "break-even.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("release lacks %s", f)
		}
	}
	if code, out, _ := runParley(t, "", "a2c", "check", dir, "--adapter", "synthetic", "--seed", "3", "--sessions", "10"); code != 0 {
		t.Fatalf("check: %d %s", code, out)
	}
	// A different corpus: the fingerprint no longer matches.
	if code, out, _ := runParley(t, "", "a2c", "check", dir, "--adapter", "synthetic", "--seed", "4", "--sessions", "10"); code != 1 || !strings.Contains(out, "fingerprint") {
		t.Fatalf("check against another corpus: %d %s", code, out)
	}
	p := filepath.Join(dir, "results.json")
	b, _ := os.ReadFile(p)
	b = []byte(strings.Replace(string(b), `"raw_tokens": `, `"raw_tokens": 1`, 1))
	os.WriteFile(p, b, 0o644)
	if code, out, _ := runParley(t, "", "a2c", "check", dir); code != 1 || !strings.Contains(out, "raw_tokens") {
		t.Fatalf("check after altering raw_tokens: %d %s", code, out)
	}
}

// TestA2CEncodeJSONShipsWhatItCounts: every text that encode --json prints is what a
// reader receives (the payload decodes to the input), and every count is the bpe count
// of that text, made here.
func TestA2CEncodeJSONShipsWhatItCounts(t *testing.T) {
	dir := t.TempDir()
	code, norm, _ := runParley(t, "", "a2c", "normalize", "--adapter", "synthetic-react", "--seed", "2", "--sessions", "4")
	if code != 0 {
		t.Fatal(code)
	}
	dict := filepath.Join(dir, "d.txt")
	if code, out, errs := runParley(t, "", "a2c", "train", "--adapter", "synthetic", "--seed", "9", "--sessions", "6", "--output", dict); code != 0 {
		t.Fatalf("train: %d %s %s", code, out, errs)
	}
	code, synth, _ := runParley(t, "", "a2c", "normalize", "--adapter", "synthetic", "--seed", "3", "--sessions", "3")
	if code != 0 {
		t.Fatal(code)
	}
	tok, err := bpe.Get("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		in   string
		args []string
	}{{norm, nil}, {synth, []string{"--dict", dict}}} {
		code, out, errs := runParley(t, tt.in, append([]string{"a2c", "encode", "--json"}, tt.args...)...)
		if code != 0 {
			t.Fatalf("encode --json %v: %d %s", tt.args, code, errs)
		}
		var payloads strings.Builder
		usedDict := false
		for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			var s struct{ ID, Payload, Instructions, Dictionary string }
			var counts map[string]any
			if err := json.Unmarshal([]byte(line), &s); err != nil {
				t.Fatal(err)
			}
			json.Unmarshal([]byte(line), &counts)
			want := map[string]int{"payload_tokens": tok.Count(s.Payload), "instruction_tokens": tok.Count(s.Instructions), "dictionary_tokens": tok.Count(s.Dictionary)}
			want["full_cost_tokens"] = want["payload_tokens"] + want["instruction_tokens"] + want["dictionary_tokens"]
			for k, v := range want {
				if got, ok := counts[k].(float64); !ok || int(got) != v {
					t.Errorf("%s: %s %v, recounted %d", s.ID, k, counts[k], v)
				}
			}
			if !strings.HasPrefix(s.Payload, "a2c/2") || s.Instructions == "" {
				t.Errorf("%s: payload %q, instructions %q", s.ID, s.Payload, s.Instructions)
			}
			usedDict = usedDict || s.Dictionary != ""
			if s.Dictionary != "" {
				// The dictionary ships packed: unpacked, it is the file the
				// payloads decode with.
				file, err := os.ReadFile(dict)
				if err != nil {
					t.Fatal(err)
				}
				d, err := a2c.UnpackDictionary(s.Dictionary)
				if err != nil || d.Text+"\n" != string(file) {
					t.Errorf("%s: the shipped dictionary unpacks to %v (%v), not the file", s.ID, d, err)
				}
			}
			payloads.WriteString(s.Payload)
		}
		if len(tt.args) > 0 && !usedDict {
			t.Error("no session shipped the dictionary it was encoded with")
		}
		if code, back, errs := runParley(t, payloads.String(), append([]string{"a2c", "decode"}, tt.args...)...); code != 0 || back != tt.in {
			t.Errorf("the shipped payloads do not decode to the input: %d %s", code, errs)
		}
	}
}
