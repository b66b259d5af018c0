package convention

import (
	"slices"
	"strings"
	"testing"
)

// lintCase is a message as agents write it and the exact warning codes it must draw, in
// order of position: both the misses and the false alarms fail the test.
type lintCase struct {
	name  string
	src   string
	codes []string
}

var lintCases = []lintCase{
	// An addressee named twice, once or in a longer list; two different ones are fine.
	{"seat twice", "v1 note limiter to lead,lead n=1\nx\n", []string{"duplicate-seat"}},
	{"seat thrice", "v1 note limiter to lead,yu,lead,lead n=1\nx\n", []string{"duplicate-seat", "duplicate-seat"}},
	{"two seats", "v1 note limiter to lead,yu n=1\nx\n", nil},
	// Clean messages, written the way the convention intends.
	{"request", `v1 request deploy to ops n=6
req deploy v2.3.1 to prod
must-not deploy during 20260919T1200Z-20260919T1400Z
may restart workers
budget 40000 tokens
ask go or no-go, 20260918T1700Z
default silence past the ask time→go
`, nil},
	{"report with run evidence", `v1 report limiter to lead re 14 n=6
done#1 limiter merged to main
ev#1 commit 9f8e7d6c on main
done#2 14 unit tests pass
ev#2 run ci-8812
todo load test at 600 req/min
eta 20260920T0900Z
`, nil},
	{"numbers that name themselves", `v1 note limiter to all n=7
limit 60 req/min per API key
req 429 with Retry-After
timeout 30s
retries 3 of 5 used
req set replicas to 3
cost 61000 tokens, p=0.7
coverage 84%
`, nil},
	{"numbered options and ratios", `v1 propose retries to lead n=6
opt/1 retry 3 times with backoff
opt/2 fail fast
rec 2
risk 1 in 10 requests hits a cold cache
ask pick 1 or 2, 20260918T0900Z
default 2
`, nil},
	{"answer may state the decision", `v1 decide limiter to builder re 15 n=2
yu decided A
outcome Redis sliding window with fail-open
`, nil},
	{"report may mention a past approval", `v1 report limiter to lead n=2
outcome lead approved the PR
eta 2h after merge
`, nil},

	// Dates and times.
	{"extended ISO", "v1 note limiter to builder n=1\ndeadline 2026-09-19T12:00:00Z\n", []string{"date-format"}},
	{"extended ISO with offset", "v1 note limiter to builder n=1\ndeadline 2026-09-19T14:00:00+02:00\n", []string{"date-format"}},
	{"date only", "v1 note limiter to builder n=1\ndeadline 2026-09-19\n", []string{"date-format"}},
	{"prose date", "v1 note limiter to builder n=1\ndeadline 12:00 UTC on September 19, 2026\n", []string{"date-format"}},
	{"basic without Z", "v1 note limiter to builder n=1\ndeadline 20260919T1200\n", []string{"date-format"}},
	{"relative", "v1 request limiter to builder n=2\nask accept or decline by EOD\ndefault reassign to ops\n", []string{"date-format"}},
	{"weekday", "v1 note limiter to builder n=1\nmust-not deploy on Friday\n", []string{"date-format"}},
	{"dates inside names are names", "v1 report migration to lead n=3\ndone#1 index built\nev#1 run dba-2026-09-21-a\noutcome logs in logs/2026-09-21.txt and release-2026-09-21\n", nil},
	{"slash date", "v1 note limiter to builder n=1\ndeadline 19/09/2026\n", []string{"date-format"}},

	{"unix timestamp", "v1 note limiter to builder n=2\ndeadline 1758283200\neta 1758283200000\n", []string{"date-format", "date-format"}},
	{"a long number that is not a time", "v1 report limiter to lead n=1\norder 1758283200 shipped\n", nil},

	// Ids.
	{"random id", "v1 report limiter to lead n=1\noutcome instance i_5fBAXDeXWz restarted\n", []string{"random-id"}},
	{"job id topic", "v1 report job-rl-0917 to lead n=1\noutcome partial\n", []string{"random-id"}},
	{"uuid", "v1 report limiter to lead n=1\nrequest 550e8400-e29b-41d4-a716-446655440000 failed\n", []string{"random-id"}},
	{"ids labelled as another system's are passed on", "v1 report booking to lead n=2\noutcome reservation ID 8C8K4E upgraded\nuser omar_davis_3817 notified\n", nil},
	{"model names are not ids", "v1 note models to all n=1\noutcome gpt-4o-mini and claude-sonnet-4-5 agree\n", nil},
	{"a pod name is noise", "v1 report deploy to lead n=1\noutcome node-7f8c9d2e4b drained\n", []string{"random-id"}},
	{"shas and run ids in evidence are fine", "v1 report limiter to lead n=2\ndone#1 fix for 3f9a2c1 regression\nev#1 run gh-a1b2c3d4e5\n", nil},

	// Evidence.
	{"done without ev", "v1 report limiter to lead n=1\ndone limiter built\n", []string{"done-without-ev"}},
	{"tests proven by a commit", "v1 report limiter to lead n=2\ndone#1 12 unit tests passing\nev#1 commit 3f9a2c1 on feat/rate-limit\n", []string{"test-evidence"}},
	{"ev names no kind", "v1 report limiter to lead n=2\ndone#1 limiter built\nev#1 https://ci.example.com/builds/812\n", []string{"ev-kind"}},
	{"bare sha evidence", "v1 report limiter to lead n=2\ndone#1 limiter built\nev#1 3f9a2c1\n", []string{"ev-kind"}},
	{"ev above its done", "v1 report limiter to lead n=2\nev#1 commit 3f9a2c1\ndone#1 limiter built\n", []string{"ev-order"}},
	{"duplicate key", "v1 report limiter to lead n=4\ndone#1 limiter built\nev#1 commit 3f9a2c1\ndone#1 docs written\nev#1 commit 4e5f6a7\n", []string{"duplicate-key"}},
	{"unkeyed pair", "v1 report limiter to lead n=2\ndone limiter built\nev commit 3f9a2c1\n", nil},

	// Asks, defaults, deciders.
	{"ask without time", "v1 request limiter to builder n=1\nask accept or decline\n", []string{"ask-no-time"}},
	{"default without ask", "v1 request limiter to builder n=2\nreq rate limit the search endpoint\ndefault reassign to ops\n", []string{"default-without-ask"}},
	{"proposal without ask", "v1 propose limiter to yu n=3\nopt/A Redis\nopt/B in-memory\ndecider yu\n", []string{"no-ask"}},
	{"decider without ask", "v1 report limiter to lead n=2\noutcome two options\ndecider yu\n", []string{"decider-without-ask"}},
	{"request without req or ask", "v1 request limiter to builder n=1\noutcome limiter needed\n", []string{"no-ask"}},
	{"deadline without time", "v1 note limiter to builder n=1\ndeadline soonish\n", []string{"deadline-no-time"}},

	// Decisions phrased as taken.
	{"the study's line", "v1 propose limiter to yu n=4\nopt/A Redis\nopt/B in-memory\n20260918T0900Z Yu (CTO) decides, no other approval\ndefault silence→A\n", []string{"no-ask", "decision-taken", "default-without-ask"}},
	{"mara decides", "v1 propose storage to mara n=3\nask Postgres or SQLite, 20260918T0900Z\nrec SQLite\nmara decides\n", []string{"decision-taken"}},
	{"decision first word", "v1 propose storage to mara n=3\nask Postgres or SQLite, 20260918T0900Z\ndecider mara\ndecision SQLite\n", []string{"decision-taken"}},
	{"signed off with an auxiliary", "v1 propose storage to mara n=3\nask Postgres or SQLite, 20260918T0900Z\ndecider mara\noutcome mara has signed off on SQLite\n", []string{"decision-taken"}},
	{"a future decider is not a decision", "v1 propose storage to mara n=3\nask Postgres or SQLite, 20260918T0900Z\nopt/A SQLite\nnote mara will decide by then\n", nil},
	{"conditional is not a decision", "v1 propose storage to mara n=3\nask Postgres or SQLite, 20260918T0900Z\ndecider mara\nplan migrate once mara decides\n", nil},

	// Bare numbers.
	{"bare number line", "v1 request limiter to builder n=2\nreq rate limit the search endpoint\n150000\n", []string{"bare-number"}},
	{"number after a modality word", "v1 request limiter to builder n=1\nreq 60\n", []string{"bare-number"}},

	// First words.
	{"misspelt reserved words", "v1 request limiter to builder n=4\nmust_not push to main\nreqs tests for the limiter\nDone: nothing yet\nmust not add dependencies\n", []string{"no-ask", "reserved-spelling", "reserved-spelling", "reserved-spelling", "reserved-spelling"}},
	{"modality synonyms", "v1 report limiter to lead n=2\nblocked on the Redis mock\nrecommendation Redis\n", []string{"modality-word", "modality-word"}},
	{"bullets", "v1 request limiter to builder n=2\n- req rate limit the search endpoint\n* must-not push to main\n", []string{"no-ask", "bullet", "bullet"}},
	{"done with a spaced key", "v1 report limiter to lead n=2\ndone #1 limiter built\nev commit 3f9a2c1\n", []string{"pair-key"}},
	{"several facts on one line", "v1 request limiter to builder n=2\nreq add tests; open a PR; tell ops\nask accept, 20260918T0900Z\n", []string{"one-fact"}},
	{"a semicolon in a plain fact is fine", "v1 report limiter to lead n=1\noutcome partial; route test blocked\n", nil},
	{"empty reserved line", "v1 request limiter to builder n=1\nreq\n", []string{"empty-line"}},

	{"label words before numbers are not modalities", "v1 note budget to all n=2\nremaining 188000 tokens\ncomplete 80%\n", nil},
	{"emoji", "v1 report limiter to lead n=1\noutcome shipped 🚀\n", []string{"emoji"}},

	// Header.
	{"unknown intent", "v1 status limiter to lead n=1\noutcome partial\n", []string{"intent"}},
	{"re with hash", "v1 answer limiter to lead re #12 n=1\noutcome Redis\n", []string{"re-form"}},
	{"blank line", "v1 report limiter to lead n=2\noutcome partial\n\neta 2h\n", []string{"blank-line"}},

	// JSON.
	{"JSON body", "v1 report limiter to lead n=3\n{\"outcome\": \"partial\",\n \"cost\": 61000,\n \"eta\": \"2h\"}\n", []string{"json-body"}},
}

func TestLint(t *testing.T) {
	for _, tt := range lintCases {
		t.Run(tt.name, func(t *testing.T) {
			m, diags := Parse(tt.src)
			if errs := Validate(m, Options{Counter: o200k}); len(diags)+len(errs) > 0 {
				t.Fatalf("the case must be valid: %v %v", diags, errs)
			}
			warns := Lint(m, Options{Counter: o200k})
			SortDiagnostics(warns)
			for _, d := range warns {
				if d.Severity != SeverityWarning {
					t.Errorf("Lint returned a %s: %s", d.Severity, d)
				}
			}
			if got := codes(warns); !slices.Equal(got, append([]string{}, tt.codes...)) {
				var b strings.Builder
				for _, d := range warns {
					b.WriteString("\n  " + d.String() + "\n    fix: " + d.Fix)
				}
				t.Errorf("codes = %v, want %v%s", got, tt.codes, b.String())
			}
		})
	}
}

// TestLintMessages checks what the warnings say, not only that they fire: the rewrite, the
// token figures the study measured, the numbers a reader needs.
func TestLintMessages(t *testing.T) {
	tests := []struct {
		src       string
		code      string
		inMessage []string
		fix       string
	}{
		{"v1 note limiter to builder n=1\ndeadline 2026-09-19T12:00:00Z\n", "date-format",
			[]string{"`2026-09-19T12:00:00Z`", "20260919T1200Z", "6 tokens fewer"}, "deadline 20260919T1200Z"},
		{"v1 note limiter to builder n=1\ndeadline 2026-09-19T12:00:05Z\n", "date-format",
			[]string{"20260919T120005Z"}, "deadline 20260919T120005Z"},
		{"v1 note limiter to builder n=1\ndeadline 2026-09-19T14:00:00+02:00\n", "date-format",
			[]string{"20260919T1200Z"}, "deadline 20260919T1200Z"},
		{"v1 note limiter to builder n=1\ndeadline 2026-09-19 12:00\n", "date-format",
			[]string{"assumes UTC"}, "deadline 20260919T1200Z"},
		{"v1 note limiter to builder n=1\ndeadline 9pm UTC on Sep 19, 2026\n", "date-format",
			nil, "deadline 20260919T2100Z"},
		{"v1 note limiter to builder n=1\ndeadline 19 September 2026\n", "date-format",
			nil, "deadline 20260919"},
		{"v1 report job-rl-0917 to lead n=1\noutcome partial\n", "random-id",
			[]string{"`job-rl-0917`", "6 tokens", "about 2"}, ""},
		{"v1 report limiter to lead n=1\noutcome instance i_5fBAXDeXWz restarted\n", "random-id",
			[]string{"10 tokens", "random"}, ""},
		{"v1 report limiter to lead n=1\ndone limiter built\n", "done-without-ev",
			[]string{"only a claim"}, "claim limiter built"},
		{"v1 report limiter to lead n=2\ndone#1 12 unit tests passing\nev#1 commit 3f9a2c1\n", "test-evidence",
			[]string{"a commit proves code exists", "run"}, "claim 12 unit tests passing"},
		{"v1 propose storage to mara n=2\nask Postgres or SQLite, 20260918T0900Z\nmara decides\n", "decision-taken",
			[]string{"`mara decides`"}, "decider mara"},
		{"v1 propose storage to mara n=2\nask Postgres or SQLite, 20260918T0900Z\nmara has signed off on SQLite\n", "decision-taken",
			[]string{"`mara has signed off`"}, "decider mara"},
		{"v1 propose limiter to yu n=3\nopt/A Redis\nopt/B memory\nyu decides by 20260918T0900Z\n", "decision-taken",
			nil, "decider yu\nask <what to decide>, 20260918T0900Z"},
		{"v1 request limiter to builder n=1\nmust_not push to main\n", "reserved-spelling",
			[]string{"`must_not`", "`must-not`"}, "must-not push to main"},
		{"v1 request limiter to builder n=1\nreqs tests\n", "reserved-spelling", nil, "req tests"},
		{"v1 request limiter to builder n=1\nreq add tests; open a PR\n", "one-fact", []string{"2 facts"}, "req add tests\nreq open a PR"},
		{"v1 request limiter to builder n=1\nDone#2: limiter built\n", "reserved-spelling", nil, "done#2 limiter built"},
		{"v1 request limiter to builder n=2\nreq rate limit\n150000\n", "bare-number", []string{"150000"}, ""},
		{"v1 report limiter to lead n=2\ndone#1 limiter built\nev#1 3f9a2c1\n", "ev-kind", nil, "ev#1 commit 3f9a2c1"},
		{"v1 report limiter to lead n=2\n- done#1 limiter built\nev#1 commit 3f9a2c1\n", "bullet", nil, "done#1 limiter built"},
		{"v1 reprot limiter to lead n=1\noutcome partial\n", "intent", nil, "v1 report limiter to lead n=1"},
	}
	for _, tt := range tests {
		_, diags := Check(tt.src, Options{Counter: o200k})
		var found *Diagnostic
		for i := range diags {
			if diags[i].Code == tt.code {
				found = &diags[i]
				break
			}
		}
		if found == nil {
			t.Errorf("%q: no %s warning in %v", tt.src, tt.code, diags)
			continue
		}
		for _, s := range tt.inMessage {
			if !strings.Contains(found.Message, s) {
				t.Errorf("%q: message %q does not contain %q", tt.src, found.Message, s)
			}
		}
		if tt.fix != "" && found.Fix != tt.fix {
			t.Errorf("%q: fix = %q, want %q", tt.src, found.Fix, tt.fix)
		}
	}
}
