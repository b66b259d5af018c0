package trace

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestDetectAndParse checks the lab's way in against the CLI's: each fixture is detected
// as the adapter it was written for, and Parse on its bytes gives what Load gives on the
// file (same IDs, same canonical records).
func TestDetectAndParse(t *testing.T) {
	for _, tc := range []struct{ adapter, file string }{
		{"openai", "testdata/openai/tau-airline-2.jsonl"},
		{"toolbench", "testdata/toolbench/10_ChatGPT_DFS_woFilter_w2.json"},
		{"swe-agent", "testdata/swe-agent/function_calling_simple.traj"},
	} {
		data, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := Detect(data); !ok || got != tc.adapter {
			t.Errorf("Detect(%s) = %q, %v; want %q", tc.file, got, ok, tc.adapter)
		}
		want, err := Load(context.Background(), tc.adapter, tc.file, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := Parse(tc.adapter, filepath.Base(tc.file), data)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) || len(got) == 0 {
			t.Fatalf("%s: Parse gave %d sessions, Load %d", tc.file, len(got), len(want))
		}
		for i := range want {
			if got[i].ID != want[i].ID || len(got[i].Records) != len(want[i].Records) {
				t.Errorf("%s session %d: Parse %q (%d records), Load %q (%d)", tc.file, i, got[i].ID, len(got[i].Records), want[i].ID, len(want[i].Records))
				continue
			}
			for j := range want[i].Records {
				g, w := got[i].Records[j].Value(), want[i].Records[j].Value()
				if !bytes.Equal(Canonical(&g), Canonical(&w)) {
					t.Errorf("%s session %d record %d differs", tc.file, i, j)
				}
			}
		}
	}
	for _, in := range []string{``, `{}`, `[1,2]`, `{"id":"a","records":[]}`, "{\"a\":1}\n{\"messages\":[]}", `{"history":{}}`, `{"answer_generation":[]}`, `not json`} {
		if a, ok := Detect([]byte(in)); ok {
			t.Errorf("Detect(%q) = %q: nothing should fit", in, a)
		}
	}
	if _, err := Parse("synthetic", "x", nil); err == nil {
		t.Error("Parse with the synthetic adapter gave no error")
	}
	if _, err := Parse("csv", "x", nil); err == nil {
		t.Error("Parse with an unknown adapter gave no error")
	}
}

// FuzzDetect: Detect never panics, and what it names reads without error: a toolbench
// answer file as exactly one session, a .traj as one.
func FuzzDetect(f *testing.F) {
	for _, p := range []string{"testdata/toolbench/10_ChatGPT_DFS_woFilter_w2.json", "testdata/swe-agent/function_calling_simple.traj"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"id":"x","messages":[{"role":"user","content":"hi"}]}`))
	f.Add([]byte(`{"answer_generation":{"query":"q","train_messages":[[{"role":"user","content":"a"}]]}}`))
	f.Add([]byte(`{"history":[{"role":"assistant","content":"ls","action":"ls"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, ok := Detect(data)
		if !ok {
			return
		}
		ss, err := Parse(a, "f", data)
		switch a {
		case "toolbench", "swe-agent":
			if err != nil || len(ss) != 1 {
				t.Fatalf("Detect says %s but Parse gives %d sessions, %v", a, len(ss), err)
			}
		}
	})
}
