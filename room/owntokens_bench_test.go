package room

import (
	"github.com/parleyhq/parley/internal/sqlitetest"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/parleyhq/parley"
)

// BenchmarkCheckSecrets measures the whole scan a post runs: the folding, the rules, and the
// own-token look-ups, on a typical ASCII report, on one with non-ASCII text, and on one with
// a string of a token's shape that is no token (one store look-up).
func BenchmarkCheckSecrets(b *testing.B) {
	st := sqlitetest.Open(b)
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

// BenchmarkParseDraft measures the checks a post passes before the store sees it (the room's
// parse: the token count, the hash, convention.Check with the room's roster, the addressing),
// on the post `parley bench server` sends and on the study's p2 and p3 as agents write them.
func BenchmarkParseDraft(b *testing.B) {
	st := sqlitetest.Open(b)
	s, err := New(st, Config{AdminToken: "admin-token-for-benchmarks", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	seats := []string{"builder", "lead", "s02", "s03", "yu"}
	roster := append(seats[:len(seats):len(seats)], "all")
	for _, c := range []struct{ name, body string }{
		{"load", "v1 report load to s03 n=4\noutcome batch 17 of s02 finished\ndone#1 parsed the input and wrote the summary\nev#1 run load-17\ntodo next batch after review\n"},
		{"p2", string(must(os.ReadFile("testdata/p2.txt")))},
		{"p3", string(must(os.ReadFile("testdata/p3.txt")))},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				if _, err := s.parse(c.body, parley.Policy{}, seats, roster); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
