package llm

import (
	"testing"
	"time"
)

// FuzzDecodeAnswer: any body either decodes to a response or is an error; never a panic, and
// the usage figures are the body's own.
func FuzzDecodeAnswer(f *testing.F) {
	for _, s := range []string{
		`{"choices":[{"message":{"content":"ok"}}],"usage":{"prompt_tokens":3,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":2}}}`,
		`{"choices":[]}`, `{"choices":[{"message":{}}]}`, `[]`, `{"usage":null}`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeAnswer(b)
		if err == nil && r == nil {
			t.Fatal("no response and no error")
		}
		if err == nil && !r.Usage.Reported && r.Usage != (Usage{}) {
			t.Fatalf("usage %+v without a usage object", r.Usage)
		}
	})
}

// FuzzRetryAfter: a Retry-After header never gives a negative wait.
func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"3", "1.5", "Tue, 01 Dec 2026 20:00:07 GMT", "-1", "", "1e400", "NaN"} {
		f.Add(s)
	}
	now := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, h string) {
		d, ok := RetryAfter(h, now)
		if d < 0 || (!ok && d != 0) {
			t.Fatalf("RetryAfter(%q) = %s, %v", h, d, ok)
		}
	})
}
