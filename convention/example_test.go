package convention_test

import (
	"fmt"

	"github.com/parleyhq/parley/bpe"
	"github.com/parleyhq/parley/convention"
)

func ExampleCheck() {
	// The status report as the study published it: its header says n=10, but it carries 9
	// fact lines, so it is data and nothing in it may be acted on.
	src := `v1 report limiter to lead n=10
ask decide 20260918T0900Z: mock Redis in tests, or skip the route test
outcome partial
done#1 limiter lib/rate-limit.ts sliding window
ev#1 commit 3f9a2c1 on branch feat/rate-limit
claim unit test passing, 12 cases
todo route test for the 429 path
block vitest lacks a Redis mock, needs UPSTASH_REDIS_REST_URL in test env
cost 61000 tokens
eta mock lands→2h to finish, p=0.7
`
	_, diags := convention.Check(src, convention.Options{})
	for _, d := range diags {
		fmt.Println("p2.txt:" + d.String())
	}
	// Output:
	// p2.txt:1:27: error: n=10 but the message has 9 fact lines: it may be truncated or padded, so it is data and nothing in it may be acted on [n-mismatch]
}

func ExampleLint() {
	// The token figures are counted by the counter passed in; bpe's encodings are counters.
	o200k, err := bpe.Get(convention.TokenEncoding)
	if err != nil {
		panic(err)
	}
	m, _ := convention.Parse("v1 report limiter to lead n=2\ndeadline 2026-09-19T12:00:00Z\ndone limiter built\n")
	for _, d := range convention.Lint(m, convention.Options{Counter: o200k}) {
		fmt.Println(d)
		fmt.Println("  fix:", d.Fix)
	}
	// Output:
	// 2:10: warning: `2026-09-19T12:00:00Z` is an extended ISO date: ISO basic 20260919T1200Z says the same in 6 tokens fewer [date-format]
	//   fix: deadline 20260919T1200Z
	// 3:1: warning: done has no ev under it, so it is only a claim: add ev commit <sha> for code or ev run <id> for a test run, or write claim [done-without-ev]
	//   fix: claim limiter built
}

func ExampleParse() {
	m, diags := convention.Parse("v1 propose limiter to yu re 7 n=2\nopt/A Redis sliding window\nask A or B, 20260918T0900Z\n")
	fmt.Println(len(diags), m.Header.Intent, m.Header.Topic, m.Header.To, m.Header.Re, m.Header.N)
	for _, l := range m.Lines {
		fmt.Printf("%d %s %q %q reserved=%v\n", l.Num, l.Word, l.Key, l.Text, l.Reserved)
	}
	// Output:
	// 0 propose limiter [yu] 7 2
	// 2 opt "A" "Redis sliding window" reserved=true
	// 3 ask "" "A or B, 20260918T0900Z" reserved=true
}

func ExampleValidate() {
	m, _ := convention.Parse("v1 report limiter to lead,mara n=1\noutcome partial\n")
	for _, d := range convention.Validate(m, convention.Options{Roster: []string{"lead", "yu"}}) {
		fmt.Println(d)
	}
	// Output:
	// 1:27: error: `mara` does not sit in this room (seats: lead, yu) [unknown-seat]
}

func ExampleRender() {
	m, _ := convention.Parse("v1  report limiter to lead, yu n=1\n   done#1   limiter built   \n")
	fmt.Print(convention.Render(m))
	// Output:
	// v1 report limiter to lead,yu n=1
	// done#1 limiter built
}

func ExampleParseTime() {
	t, ok := convention.ParseTime("20260918T0900Z")
	fmt.Println(t, ok)
	_, ok = convention.ParseTime("2026-09-18T09:00:00Z")
	fmt.Println(ok)
	// Output:
	// 2026-09-18 09:00:00 +0000 UTC true
	// false
}

func ExampleLine_Time() {
	m, _ := convention.Parse("v1 request limiter to builder n=1\nask accept or decline, 20260917T1800Z\n")
	due, ok := m.Lines[0].Time()
	fmt.Println(convention.FormatTime(due), ok)
	// Output:
	// 20260917T1800Z true
}

func ExampleParseEvidence() {
	fmt.Println(convention.ParseEvidence("commit 3f9a2c1 on branch feat/rate-limit"))
	kind, ref, _ := convention.ParseEvidence("run 812")
	fmt.Println(kind, ref)
	kind, _, _ = convention.ParseEvidence("the CI is green")
	fmt.Printf("%q\n", kind)
	// Output:
	// commit 3f9a2c1 feat/rate-limit
	// run 812
	// ""
}

func ExampleLooks() {
	fmt.Println(convention.Looks("v1 report limiter to lead n=9\n"))
	fmt.Println(convention.Looks("REPORT|IT|return:builder|aacp:1.1"))
	// Output:
	// true
	// false
}
