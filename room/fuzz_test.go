package room

import (
	"errors"
	"strings"
	"testing"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/bpe"
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
