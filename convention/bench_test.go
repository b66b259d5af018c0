package convention

import (
	"fmt"
	"runtime"
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

// byteCounter counts how many bytes Check hands the tokenizer, a measure of its work.
type byteCounter struct {
	n     int
	inner interface{ Count(string) int }
}

func (c *byteCounter) Count(s string) int {
	c.n += len(s)
	return c.inner.Count(s)
}

// work checks src once and returns the bytes it gave the tokenizer, the bytes it
// allocated and its allocation count: operation counts that a loaded machine does not
// blur the way it blurs wall time.
func work(src string) (counted, allocBytes, mallocs uint64) {
	c := &byteCounter{inner: o200k}
	Check(src, Options{Counter: c}) // warm up lazily built tables
	c.n = 0
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	Check(src, Options{Counter: c})
	runtime.ReadMemStats(&after)
	return uint64(c.n), after.TotalAlloc - before.TotalAlloc, after.Mallocs - before.Mallocs
}

// TestLargeInputIsLinear guards against quadratic rules: a message of one long line of
// numbers, and one of many short lines, checked at n and 8n. Linear work grows 8 times;
// quadratic work 64 times. Each measure must grow at most 20 times (a generous bound).
func TestLargeInputIsLinear(t *testing.T) {
	long := func(k int) string {
		return "v1 report limiter to lead n=1\nreq " + strings.Repeat("12, 34 x ", k) + "\n"
	}
	many := func(k int) string {
		return fmt.Sprintf("v1 report limiter to lead n=%d\n", k) + strings.Repeat("ev#1 commit 3f9a2c1\n", k)
	}
	for name, gen := range map[string]func(int) string{"one long line": long, "many lines": many} {
		small, large := gen(4000), gen(32000)
		c1, b1, m1 := work(small)
		c8, b8, m8 := work(large)
		if b1 == 0 || m1 == 0 || (c1 == 0) != (c8 == 0) {
			t.Fatalf("%s: nothing measured (counted %d/%d bytes, allocated %d bytes in %d allocations)", name, c1, c8, b1, m1)
		}
		if c1 == 0 {
			c1, c8 = 1, 1 // no token counts asked on this input
		}
		for _, r := range []struct {
			what         string
			small, large uint64
		}{{"bytes given to the tokenizer", c1, c8}, {"bytes allocated", b1, b8}, {"allocations", m1, m8}} {
			if ratio := float64(r.large) / float64(r.small); ratio > 20 {
				t.Errorf("%s: %s grew %.1f× for 8× the input (%d → %d): not linear", name, r.what, ratio, r.small, r.large)
			}
		}
	}
}

// BenchmarkCheckStatus measures Check on the short status report that `parley bench server`
// posts (loadbench.loadPost), the post pipeline's common case.
func BenchmarkCheckStatus(b *testing.B) {
	src := "v1 report load to s01 n=4\noutcome batch 4711 of s00 finished\ndone#1 parsed the input and wrote the summary\nev#1 run load-4711\ntodo next batch after review\n"
	roster := []string{"s00", "s01", "s02", "all"}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		Check(src, Options{Roster: roster, Counter: o200k})
	}
}

// BenchmarkCheckLoadPost measures Check on the post `parley bench server` sends (loadbench's
// loadPostTo), the body every post of that benchmark is linted as.
func BenchmarkCheckLoadPost(b *testing.B) {
	src := "v1 report load to s03 n=4\noutcome batch 1234 of s02 finished\ndone#1 parsed the input and wrote the summary\nev#1 run load-1234\ntodo next batch after review\n"
	roster := []string{"s00", "s01", "s02", "s03", "s04", "s05", "s06", "s07", "s08", "s09", "s10", "s11", "s12", "s13", "s14", "s15", "s16", "s17", "s18", "s19"}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		Check(src, Options{Roster: roster, Counter: o200k})
	}
}
