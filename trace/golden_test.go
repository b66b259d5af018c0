package trace

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestGoldenAdapters normalizes the fixtures in testdata and compares the canonical
// sessions with the golden files, so that any change to a mapping shows up as a diff.
func TestGoldenAdapters(t *testing.T) {
	for _, tc := range []struct{ adapter, dir string }{
		{"toolbench", "toolbench"}, {"openai", "openai"}, {"swe-agent", "swe-agent"},
	} {
		t.Run(tc.adapter, func(t *testing.T) {
			ss, err := Load(context.Background(), tc.adapter, filepath.Join("testdata", tc.dir), LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(ss) == 0 {
				t.Fatal("no sessions")
			}
			var got bytes.Buffer
			for i := range ss {
				v := ss[i].Value()
				got.Write(AppendCanonical(nil, &v))
				got.WriteByte('\n')
			}
			golden := filepath.Join("testdata", tc.dir+".golden.jsonl")
			if *update {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./trace -update to create it)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s: normalized sessions differ from %s (run with -update if the change is intended)", tc.adapter, golden)
			}
			// Reading the canonical lines back gives the same sessions.
			for i, line := range bytes.Split(bytes.TrimSuffix(want, []byte("\n")), []byte("\n")) {
				v, err := ParseJSON(line)
				if err != nil {
					t.Fatal(err)
				}
				s, err := SessionFromValue(&v)
				if err != nil {
					t.Fatal(err)
				}
				sv := s.Value()
				if !bytes.Equal(AppendCanonical(nil, &sv), line) {
					t.Fatalf("session %d does not read back to the same line", i)
				}
			}
		})
	}
}
