package convention

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ from the current output")

// TestGolden checks every message in testdata/lint against its .golden file: the complete
// diagnostics (with fixes) and the canonical rendering. Run with -update after a deliberate
// change and review the diff.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/lint/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got := goldenOutput(filepath.Base(f), string(src))
			golden := strings.TrimSuffix(f, ".txt") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("output differs from %s (run go test -update and review the diff)\ngot:\n%s\nwant:\n%s", golden, got, want)
			}
		})
	}
}

func goldenOutput(name, src string) string {
	m, diags := Check(src, Options{Counter: o200k, Roster: []string{"lead", "builder", "yu"}})
	var b strings.Builder
	for _, d := range diags {
		b.WriteString(name + ":" + d.String() + "\n")
		if d.Fix != "" {
			b.WriteString("    fix: " + strings.ReplaceAll(d.Fix, "\n", "\n         ") + "\n")
		}
	}
	b.WriteString("-- render --\n")
	b.WriteString(Render(m))
	return b.String()
}
