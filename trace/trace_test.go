package trace

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/parleyhq/parley/internal/sharedtest"
)

const corpus = "../../shared/corpus"

func needCorpus(t *testing.T, sub string) string {
	t.Helper()
	p := filepath.Join(corpus, sub)
	if _, err := os.Stat(p); err != nil {
		sharedtest.Absent(t, "shared corpus not present at %s (it lives beside the repository in ../shared): %v", p, err)
	}
	return p
}

func TestCanonicalNumbersAndEscapes(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"b":1000.0,"a":-0}`, `{"a":-0,"b":1000.0}`},
		{`[1e400, 12345678901234567890, -1.5E-7]`, `[1e400,12345678901234567890,-1.5E-7]`},
		{`"\u00e9\/\b\f\n\r\t\u0001\u007f"`, "\"é/\\b\\f\\n\\r\\t\\u0001\x7f\""},
		{`"\ud83d\ude00 \ud800 x \udfff"`, `"😀 \ud800 x \udfff"`},
		{`"\u2028"`, `"\u2028"`},
		{`{"z":{},"y":[],"x":""}`, `{"x":"","y":[],"z":{}}`},
		{`{"é":1,"e":2,"a":3,"a":4}`, `{"a":3,"a":4,"e":2,"é":1}`},
	}
	for _, tt := range tests {
		v, err := ParseJSON([]byte(tt.in))
		if err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		if got := string(Canonical(&v)); got != tt.want {
			t.Errorf("Canonical(%s) = %s, want %s", tt.in, got, tt.want)
		}
		// Canonical JSON is a fixed point.
		v2, err := ParseJSON([]byte(tt.want))
		if err != nil {
			t.Fatal(err)
		}
		if got := string(Canonical(&v2)); got != tt.want {
			t.Errorf("not a fixed point: %s -> %s", tt.want, got)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{``, `{`, `[1,]`, `01`, `1.`, `"\x"`, "\"\x01\"", `{"a" 1}`, `tru`, `1 2`, `"\ud800\u12"`} {
		if _, err := ParseJSON([]byte(in)); err == nil {
			t.Errorf("ParseJSON(%q) succeeded, want an error", in)
		}
	}
}

func TestRecordRoundTrip(t *testing.T) {
	for _, s := range Synthetic(3, 5) {
		for _, r := range s.Records {
			c := r.Canonical()
			v, err := ParseJSON(c)
			if err != nil {
				t.Fatal(err)
			}
			r2, err := RecordFromValue(&v)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(r2.Canonical(), c) {
				t.Fatalf("record round trip changed %s", c)
			}
		}
	}
}

func TestSyntheticDeterministic(t *testing.T) {
	a, b := Synthetic(42, 10), Synthetic(42, 10)
	c := Synthetic(43, 10)
	same := func(x, y []Session) bool {
		for i := range x {
			if len(x[i].Records) != len(y[i].Records) {
				return false
			}
			for j := range x[i].Records {
				if !bytes.Equal(x[i].Records[j].Canonical(), y[i].Records[j].Canonical()) {
					return false
				}
			}
		}
		return true
	}
	if !same(a, b) {
		t.Fatal("same seed gave different sessions")
	}
	if same(a, c) {
		t.Fatal("different seeds gave the same sessions")
	}
}

// TestCorpusAdapters reads every shared corpus source and checks the shapes the package
// doc promises.
func TestCorpusAdapters(t *testing.T) {
	for _, tc := range []struct {
		adapter, dir string
		minSessions  int
	}{
		{"toolbench", "toolbench", 16},
		{"openai", "openai", 100},
		{"swe-agent", "swe-agent", 20},
	} {
		t.Run(tc.adapter, func(t *testing.T) {
			dir := needCorpus(t, tc.dir)
			ss, err := Load(context.Background(), tc.adapter, dir, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(ss) < tc.minSessions {
				t.Fatalf("%d sessions, want at least %d", len(ss), tc.minSessions)
			}
			n := 0
			kinds := map[Kind]int{}
			for _, s := range ss {
				for _, r := range s.Records {
					n++
					kinds[r.Kind]++
					v, err := ParseJSON(r.Canonical())
					if err != nil {
						t.Fatalf("%s: canonical JSON does not parse: %v", s.ID, err)
					}
					if _, err := RecordFromValue(&v); err != nil {
						t.Fatalf("%s: %v", s.ID, err)
					}
				}
			}
			if kinds[KindToolCall] == 0 || kinds[KindToolResult] == 0 {
				t.Errorf("no tool calls or results: %v", kinds)
			}
			t.Logf("%d sessions, %d records, kinds %v", len(ss), n, kinds)
		})
	}
}

func TestToolBenchFallbacks(t *testing.T) {
	dir := needCorpus(t, "toolbench")
	// 69_ChatGPT… has no train_messages: the tree's last branch stands in.
	data, err := os.ReadFile(filepath.Join(dir, "ToolBench/data_example/answer/G1_answer/69_ChatGPT_DFS_woFilter_w2.json"))
	if err != nil {
		t.Skip(err)
	}
	s, ok, err := ToolBench("69", data)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if len(s.Records) < 4 || s.Records[0].Kind != KindPlan || s.Records[len(s.Records)-1].Kind != KindStatus {
		t.Fatalf("unexpected shape: %d records", len(s.Records))
	}
	src, _ := s.Records[len(s.Records)-1].Meta.Get("conversation_source")
	if src == nil || src.Str != "tree" {
		t.Fatalf("conversation_source = %v, want tree", src)
	}
}

func TestLoadSkipsUnreadableFiles(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "good.jsonl"), []byte(`{"id":"a","messages":[{"role":"user","content":"hi"}]}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "bad.jsonl"), []byte("{not json\n"), 0o644)
	if _, err := Load(context.Background(), "openai", dir, LoadOptions{}); err == nil {
		t.Fatal("a malformed file did not stop Load without Skip")
	}
	var skipped []string
	ss, err := Load(context.Background(), "openai", dir, LoadOptions{Skip: func(p string, err error) { skipped = append(skipped, filepath.Base(p)) }})
	if err != nil || len(ss) != 1 || len(skipped) != 1 || skipped[0] != "bad.jsonl:1" {
		t.Fatalf("sessions %d, skipped %v, err %v", len(ss), skipped, err)
	}
}

// TestSyntheticReActShape: the ReAct generator is seeded (same seed, same bytes; another
// seed, other sessions) and gives the promised shape: a question, rounds of
// plan / tool_call / tool_result, a final answer, 5 to 11 handoffs.
func TestSyntheticReActShape(t *testing.T) {
	a, b, c := SyntheticReAct(3, 30), SyntheticReAct(3, 30), SyntheticReAct(4, 30)
	if len(a) != 30 {
		t.Fatalf("%d sessions", len(a))
	}
	same, other := true, true
	for i := range a {
		va, vb, vc := a[i].Value(), b[i].Value(), c[i].Value()
		same = same && string(AppendCanonical(nil, &va)) == string(AppendCanonical(nil, &vb))
		other = other && string(AppendCanonical(nil, &va)) != string(AppendCanonical(nil, &vc))
		rs := a[i].Records
		if n := len(rs); n < 5 || n > 11 || (n-2)%3 != 0 {
			t.Fatalf("%s: %d handoffs", a[i].ID, n)
		}
		if rs[0].Kind != KindMessage || rs[len(rs)-1].Kind != KindFinal {
			t.Errorf("%s: starts with %s, ends with %s", a[i].ID, rs[0].Kind, rs[len(rs)-1].Kind)
		}
		for k := 1; k+2 < len(rs); k += 3 {
			if rs[k].Kind != KindPlan || rs[k+1].Kind != KindToolCall || rs[k+2].Kind != KindToolResult || rs[k+1].CallID != rs[k+2].CallID {
				t.Errorf("%s: round at %d is %s/%s/%s", a[i].ID, k, rs[k].Kind, rs[k+1].Kind, rs[k+2].Kind)
			}
		}
	}
	if !same || !other {
		t.Errorf("same seed same sessions: %v; other seed other sessions: %v", same, other)
	}
}
