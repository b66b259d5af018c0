package lab

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/parleyhq/parley/a2c"
	"github.com/parleyhq/parley/bpe"
	"github.com/parleyhq/parley/trace"
)

// TestAnalyzeFixtures pastes each adapter's fixture and checks what the page shows against
// what is computed apart from Analyze: the adapter is detected; every payload, decoded by
// a2c.DecodeSession, gives back the canonical text shown beside it, line for line; every
// token count is the count of the text shown.
func TestAnalyzeFixtures(t *testing.T) {
	for _, tc := range []struct{ adapter, file string }{
		{"openai", "../trace/testdata/openai/tau-airline-2.jsonl"},
		{"toolbench", "../trace/testdata/toolbench/10_ChatGPT_DFS_woFilter_w2.json"},
		{"swe-agent", "../trace/testdata/swe-agent/function_calling_simple.traj"},
	} {
		data, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		an, err := Analyze(context.Background(), string(data), AdapterAuto, "")
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if an.Adapter != tc.adapter || !an.Detected {
			t.Errorf("%s: read as %q (detected %v)", tc.file, an.Adapter, an.Detected)
		}
		if len(an.Figures) != len(Encodings) {
			t.Fatalf("%d figure sets", len(an.Figures))
		}
		for _, s := range an.Sessions {
			for _, name := range Encodings {
				c, _ := bpe.Get(name)
				e := s.A2C[name]
				if !e.Lossless || e.BadRecords != 0 {
					t.Errorf("%s %s %s: not lossless (%d bad, %s)", tc.file, s.ID, name, e.BadRecords, e.Error)
				}
				id, recs, err := a2c.DecodeSession(e.Payload, nil)
				if err != nil || id != s.ID {
					t.Fatalf("%s %s: decode the shown payload: %q, %v", tc.file, s.ID, id, err)
				}
				var b strings.Builder
				for i := range recs {
					b.Write(trace.Canonical(&recs[i]))
					b.WriteByte('\n')
				}
				if b.String() != s.Canonical {
					t.Errorf("%s %s %s: the shown payload does not decode to the shown canonical JSON", tc.file, s.ID, name)
				}
				for what, pair := range map[string][2]any{
					"payload":      {e.PayloadTokens, c.Count(e.Payload)},
					"instructions": {e.InstructionTokens, c.Count(e.Instructions)},
					"canonical":    {e.CanonicalTokens, c.Count(s.Canonical)},
					"minified":     {e.MinifiedJSONTokens, c.Count(s.MinifiedJSON)},
					"toon":         {e.TOONTokens, c.Count(s.TOON)},
				} {
					if pair[0] != pair[1] {
						t.Errorf("%s %s %s: %s tokens %v, recounted %v", tc.file, s.ID, name, what, pair[0], pair[1])
					}
				}
				if e.Instructions == "" || !strings.HasPrefix(e.Payload, "a2c/2 ") {
					t.Errorf("%s %s: payload %.40q, instructions %.40q", tc.file, s.ID, e.Payload, e.Instructions)
				}
			}
		}
	}
}

// TestAnalyzeRecords: bare JSON record lines, worked by hand.
func TestAnalyzeRecords(t *testing.T) {
	an, err := Analyze(context.Background(), "{\"b\":[1, 2],\"a\":\"x\"}\n\n{\"c\":null}\n", AdapterAuto, "")
	if err != nil {
		t.Fatal(err)
	}
	if an.Adapter != AdapterRecords || len(an.Sessions) != 1 {
		t.Fatalf("adapter %q, %d sessions", an.Adapter, len(an.Sessions))
	}
	s := an.Sessions[0]
	// Minified JSON keeps the members as written; canonical JSON sorts them.
	if s.ID != trace.StreamSessionID || s.Records != 2 || s.MinifiedJSON != `[{"b":[1,2],"a":"x"},{"c":null}]` || s.Canonical != "{\"a\":\"x\",\"b\":[1,2]}\n{\"c\":null}\n" {
		t.Errorf("got %+v", s)
	}
	for _, f := range an.Figures {
		if f.Sessions != 1 || f.Handoffs != 2 || !f.Lossless || f.DictionaryFolds != 0 {
			t.Errorf("%s: %+v", f.Encoding, f.Result)
		}
	}
}

func TestAnalyzeErrors(t *testing.T) {
	for _, tc := range []struct{ text, adapter, want string }{
		{"  \n", AdapterAuto, "nothing to analyze"},
		{"hello", AdapterAuto, "line 1"},
		{`{"query":"not an answer file"}`, "toolbench", "found no session"},
		{"{\"id\":\"a\",\"messages\":[]}\nnot json", "openai", "openai: line 2"},
		{`{}`, "csv", "unknown adapter"},
	} {
		_, err := Analyze(context.Background(), tc.text, tc.adapter, "")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Analyze(%q, %s) = %v; want an error with %q", tc.text, tc.adapter, err, tc.want)
		}
	}
}

// TestLintMessage: n=2 over one fact line is an n-mismatch error at line 1, column 27, the
// "n=2" after the 26 characters "v1 report limiter to lead ".
func TestLintMessage(t *testing.T) {
	l, err := LintMessage("v1 report limiter to lead n=2\ndone#1 limiter built")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range l.Diagnostics {
		found = found || d.Code == "n-mismatch" && d.Line == 1 && d.Col == 27 && d.Severity == "error"
	}
	if l.Format != "convention" || !found {
		t.Errorf("got %+v", l)
	}
	l, _ = LintMessage("REPORT|IT|return:builder|p:1|aacp:1.1|to:lead|done")
	if l.Format != "aacp" {
		t.Errorf("an AACP packet read as %q", l.Format)
	}
}

// FuzzAnalyze: whatever is pasted, Analyze does not panic, and what it accepts round-trips
// byte for byte in both encodings.
func FuzzAnalyze(f *testing.F) {
	f.Add(`{"a":1}`, "auto")
	f.Add("{\"id\":\"s\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":\"hello\"}]}", "auto")
	f.Add(`{"answer_generation":{"query":"q","train_messages":[[{"role":"user","content":"a"}]]}}`, "toolbench")
	f.Add(`{"history":[{"role":"assistant","content":"ls","action":"ls"}]}`, "swe-agent")
	f.Fuzz(func(t *testing.T, text, adapter string) {
		an, err := Analyze(context.Background(), text, adapter, "")
		if err != nil {
			return
		}
		for _, fg := range an.Figures {
			if !fg.Lossless {
				t.Fatalf("%s: %d lossy records", fg.Encoding, fg.LossyRecords)
			}
		}
	})
}
