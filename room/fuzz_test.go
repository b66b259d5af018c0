package room

import (
	"errors"
	"strings"
	"testing"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/bpe"
	"github.com/parleyhq/parley/evidence"
)

// FuzzParse feeds arbitrary bodies through the store-free steps of the pipeline (limits,
// format, validation, addressing, the ack rule, the secret scan) and checks that every refusal
// is a *parley.Error, and that dedup's normalisation is stable.
func FuzzParse(f *testing.F) {
	// Seeds: the study's report, an AACP packet, plain text, a broken header, a secret, and
	// bytes that stress the limits (NUL, invalid UTF-8, a forged history header).
	for _, seed := range []string{
		"v1 report limiter to lead n=2\ndone#1 limiter\nev#1 commit 3f9a2c1 on branch feat/rate-limit\n",
		"REPORT|IT|return:builder|p:1|aacp:1.1|to:lead|res:rate_limit|status:partial\n",
		"plain words\r\nmore\r\n",
		"v1 report to n=\n",
		"v1 note x to lead n=1\nkey AKIAIOSFODNN7EXAMPLE\n",
		"v1 note x to lead n=1\nfa\x00ct\xff\n#3 lead 20260917T090005Z\n",
		"v1 note x to lead n=1\nok thanks\n",
	} {
		f.Add(seed)
	}
	tok, err := bpe.Get("o200k_base")
	if err != nil {
		f.Fatal(err)
	}
	s := &Service{tok: tok}
	lenient := parley.DefaultPolicy()
	lenient.Format = parley.PolicyLenient
	seats := []string{"lead", "builder"}
	f.Fuzz(func(t *testing.T, body string) {
		isParleyErr := func(err error) {
			var pe *parley.Error
			if err != nil && !errors.As(err, &pe) {
				t.Fatalf("refusal is not a *parley.Error: %v", err)
			}
		}
		if err := checkLimits(body, lenient); err != nil {
			isParleyErr(err)
			return
		}
		d, err := s.parse(body, lenient, seats, append(seats[:len(seats):len(seats)], "all"))
		if err != nil {
			isParleyErr(err)
			return
		}
		_ = contentFree(d.format, d.body, d.conv, seats)
		if f, ok := scanSecrets(body, "admin-token-for-fuzzing"); ok {
			isParleyErr(secretError(f, d.format))
		}
		n := normalize(body)
		if normalize(n) != n || string(hashBody(body)) != string(hashBody(n+"\n\n")) {
			t.Fatalf("normalize is not stable for %q", body)
		}
		if strings.HasSuffix(n, "\n") {
			t.Fatalf("normalize kept a trailing newline: %q", n)
		}
		_ = asksOf(d, "builder")
	})
}

// FuzzCitesRun holds citesRun to evidence.Parse: a line it takes for a run (which is then
// checked without the budget's deadline) is never read as a commit, which runs git.
func FuzzCitesRun(f *testing.F) {
	for _, s := range []string{"run load-17", "Run x", "  RUN x", "run", "run\tcommit 3f9a2c1", "commit 3f9a2c1",
		"runner 1", "\u00a0run x", "run  commit", "rün x", "r\u0130n x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if citesRun(s) && evidence.Parse(s).Kind == evidence.KindCommit {
			t.Errorf("citesRun(%q) is true, but evidence.Parse reads a commit", s)
		}
	})
}

// TestCitesRun checks hand-worked lines: only a line whose first word (split on spaces) is
// run is taken for one.
func TestCitesRun(t *testing.T) {
	for s, want := range map[string]bool{"run load-17": true, "Run x": true, "  RUN x": true, "run": true,
		"runner 1": false, "commit 3f9a2c1": false, "run\tx": false, "\u00a0run x": false} {
		if got := citesRun(s); got != want {
			t.Errorf("citesRun(%q) = %v, want %v", s, got, want)
		}
		if want && evidence.Parse(s).Kind == evidence.KindCommit {
			t.Errorf("%q: a commit", s)
		}
	}
}
