package convention

import (
	"strings"
	"testing"
)

// BenchmarkCheck measures the whole pipeline (parse, validate, lint) on the study's p2.
func BenchmarkCheck(b *testing.B) {
	src := "v1 report limiter to lead n=9\nask decide 20260918T0900Z: mock Redis in tests, or skip the route test\noutcome partial\ndone#1 limiter lib/rate-limit.ts sliding window\nev#1 commit 3f9a2c1 on branch feat/rate-limit\nclaim unit test passing, 12 cases\ntodo route test for the 429 path\nblock vitest lacks a Redis mock, needs UPSTASH_REDIS_REST_URL in test env\ncost 61000 tokens\neta mock lands→2h to finish, p=0.7\n"
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		Check(src, Options{Counter: o200k})
	}
}

// BenchmarkParse measures Parse alone, which the server runs on every post.
func BenchmarkParse(b *testing.B) {
	src := "v1 report limiter to lead n=9\nask decide 20260918T0900Z: mock Redis in tests, or skip the route test\noutcome partial\ndone#1 limiter lib/rate-limit.ts sliding window\nev#1 commit 3f9a2c1 on branch feat/rate-limit\nclaim unit test passing, 12 cases\ntodo route test for the 429 path\nblock vitest lacks a Redis mock, needs UPSTASH_REDIS_REST_URL in test env\ncost 61000 tokens\neta mock lands→2h to finish, p=0.7\n"
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		Parse(src)
	}
}

// TestLargeInputIsLinear guards against quadratic rules: a 256 KiB message of one long line
// of numbers, and one of many short lines, must check quickly.
func TestLargeInputIsLinear(t *testing.T) {
	long := "v1 report limiter to lead n=1\nreq " + strings.Repeat("12, 34 x ", 30000) + "\n"
	many := "v1 report limiter to lead n=20000\n" + strings.Repeat("ev#1 commit 3f9a2c1\n", 20000)
	for _, src := range []string{long, many} {
		Check(src, Options{Counter: o200k})
	}
}
