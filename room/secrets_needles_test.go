package room

import (
	"strings"
	"testing"
)

// secretSamples are bodies that every rule must still catch with its needles in front: one
// or more per rule, and variants spelt with the characters (?i) matches beyond ASCII.
var secretSamples = []string{
	"-----BEGIN OPENSSH PRIVATE KEY-----",
	"-----BEGIN RSA PRIVATE KEY BLOCK-----",
	"key AKIAIOSFODNN7EXAMPLE and ASIAIOSFODNN7EXAMPLE",
	"aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	"AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'",
	"aw\u017f_\u017fecret_acce\u017f\u017f_\u212aey=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", // ſ and K (Kelvin)
	"token ghp_" + strings.Repeat("a1B2", 9),
	"token github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
	"hook xoxb-123456789012-abcdefABCDEF",
	"key sk-proj-abcdefghijklmnopqrstuvwxyz012345",
	"sk_live_abcdefghijklmnop1234 and rk_test_abcdefghijklmnop1234",
	"AIzaSyA-abcdefghijklmnopqrstuvwxyz01234",
	"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
	"curl -H 'Authorization: Bearer abcdefghijklmnop.qrstuvwx'",
	"BEARER abcdefghijklmnopqrstuvwx",
	"db password=hunter2!",
	"PA\u017f\u017fWORD: hunter2!",
	"api_\u212aey = 'abcd1234'",
	"client_secret: abcdefgh",
	"PASSWD=hunter2! pwd: hunter2! passphrase=correcthorse",
	"APIKEY: abcd1234 access-token=abcd1234 Auth_Token: abcd1234 private_key=abcd1234 secretkey=abcd1234",
	"dsn postgres://app:s3cretpw@db:5432/app",
	"pk_" + strings.Repeat("Ab0_", 10) + "xyz",
}

// FuzzSecretNeedles checks that no rule's needles skip a body its regexp matches: the
// needles are a shortcut, never a change in what the scan finds.
func FuzzSecretNeedles(f *testing.F) {
	for _, s := range secretSamples {
		f.Add(s)
	}
	// Near misses: a needle cut short, or at the very end, or an also alone.
	for _, s := range []string{"password", "the api", "x=1", "wd:", "ak", "a", "xo", "k_live", "private ke", "s\u212a-", "=wd"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		lower := strings.ToLower(body)
		may := mayMatchRules(lower)
		if got := mayMatchBody(body); got != may {
			t.Fatalf("mayMatchBody(%q) = %b, mayMatchRules of the lowered body %b", body, got, may)
		}
		for i := range secretRules {
			r := &secretRules[i]
			if r.re.MatchString(body) && !r.mayMatch(lower) {
				t.Fatalf("%s: the regexp matches %q but no needle %q is in it", r.kind, body, r.needles)
			}
			// The one pass over the body finds what a search per needle finds.
			if got := may&(1<<i) != 0; got != r.mayMatch(lower) {
				t.Fatalf("%s: mayMatchRules says %v of %q, mayMatch %v", r.kind, got, body, r.mayMatch(lower))
			}
		}
	})
}

// TestSecretSamplesFound checks that each sample is found by some rule (so the samples test
// what they mean to).
func TestSecretSamplesFound(t *testing.T) {
	for _, s := range secretSamples {
		if _, ok := scanSecrets(s, ""); !ok {
			t.Errorf("not found: %q", s)
		}
	}
}

// BenchmarkScanSecrets scans a typical report with no secret in it, as every post does.
func BenchmarkScanSecrets(b *testing.B) {
	body := "v1 report load to s03 n=4\noutcome batch 17 of s02 finished\ndone#1 parsed the input and wrote the summary\nev#1 run load-17\ntodo next batch after review\n"
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, ok := scanSecrets(body, "admin-token-for-benchmarks"); ok {
			b.Fatal("found a secret")
		}
	}
}
