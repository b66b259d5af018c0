package room

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parleyhq/parley/sqlite"
)

// BenchmarkCheckSecrets measures the whole scan a post runs: the folding, the rules, and the
// own-token look-ups, on a typical ASCII report, on one with non-ASCII text, and on one with
// a string of a token's shape that is no token (one store look-up).
func BenchmarkCheckSecrets(b *testing.B) {
	st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	s, err := New(st, Config{AdminToken: "admin-token-for-benchmarks", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	report := "v1 report load to s03 n=4\noutcome batch 17 of s02 finished\ndone#1 parsed the input and wrote the summary\nev#1 run load-17\ntodo next batch after review\n"
	for name, body := range map[string]string{
		"ascii":     report,
		"non-ascii": strings.ReplaceAll(report, "summary", "résumé — naïve café"),
		"lookup":    report + "fact id x" + TokenPrefix + strings.Repeat("Ab9", 14) + "Zy\n",
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if err := s.checkSecrets(b.Context(), body, "convention"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
