package readers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/parleyhq/parley/bench"
	"github.com/parleyhq/parley/bench/readers"
	"github.com/parleyhq/parley/llm"
	"github.com/parleyhq/parley/llm/llmtest"
)

func cases(t *testing.T) []readers.Case {
	t.Helper()
	fsys := bench.EmbeddedStudy()
	st, err := bench.LoadStudy(fsys)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := readers.Cases(st, fsys, bench.DefaultFormats())
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// caseOf finds the case whose message text a reader prompt carries.
func caseOf(t *testing.T, cs []readers.Case, prompt string) readers.Case {
	for _, c := range cs {
		if strings.Contains(prompt, "<message>\n"+strings.TrimRight(c.Text, "\n")+"\n</message>") {
			return c
		}
	}
	t.Errorf("no case matches the prompt %.200q", prompt)
	return readers.Case{}
}

var keyLine = regexp.MustCompile(`(?m)^(\d+)\. (.*)$`)

// literalJudge grades as a strict person would with the key in hand: a key fact is present
// when the reader's facts hold it word for word; the must-do when it is the expected one
// word for word.
func literalJudge(prompt string) string {
	ans := prompt[strings.Index(prompt, "<answer>\n")+len("<answer>\n") : strings.Index(prompt, "\n</answer>")]
	a, err := readers.ParseAnswer(ans)
	if err != nil {
		return "not json"
	}
	have := map[string]bool{}
	for _, f := range a.Facts {
		have[f] = true
	}
	type fv struct {
		N       int  `json:"n"`
		Present bool `json:"present"`
	}
	var out struct {
		Facts  []fv `json:"facts"`
		MustDo bool `json:"must_do"`
	}
	for _, m := range keyLine.FindAllStringSubmatch(prompt, -1) {
		n, _ := strconv.Atoi(m[1])
		out.Facts = append(out.Facts, fv{n, have[m[2]]})
	}
	want := strings.TrimPrefix(regexp.MustCompile(`(?m)^Expected must_do: .*$`).FindString(prompt), "Expected must_do: ")
	out.MustDo = a.MustDo == want
	b, _ := json.Marshal(out)
	return "```json\n" + string(b) + "\n```"
}

// standIn answers reader calls with answer(c) and judge calls with the literal judge.
func standIn(t *testing.T, cs []readers.Case, answer func(readers.Case) string) *llmtest.Server {
	s := llmtest.New()
	s.Respond = func(r llmtest.Request) llmtest.Reply {
		if strings.HasPrefix(r.Messages[0].Content, "You grade") {
			return llmtest.Reply{Content: literalJudge(r.Last("user")), Usage: llm.Usage{PromptTokens: 400, CompletionTokens: 90}}
		}
		c := caseOf(t, cs, r.Last("user"))
		return llmtest.Reply{Content: answer(c), Usage: llm.Usage{PromptTokens: 500 + len(r.Text()), CompletionTokens: 200, CachedTokens: 128}}
	}
	return s
}

func perfect(c readers.Case) string {
	b, _ := json.Marshal(map[string]any{"facts": c.Key.Facts, "must_do": c.Expect.MustDo, "by": c.Expect.By, "settled": c.Expect.Settled})
	return "Here is my answer:\n" + string(b)
}

func run(t *testing.T, s *llmtest.Server, cs []readers.Case, trials int) []readers.Row {
	t.Helper()
	c, err := llm.New(llm.Config{Endpoint: s.URL, Model: "reader"})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := readers.Run(context.Background(), c, c, cs, trials, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestPerfectReaderScoresEverything(t *testing.T) {
	cs := cases(t)
	// 3 messages × 7 formats, and the truncation case.
	if len(cs) != 22 {
		t.Fatalf("%d cases, want 22", len(cs))
	}
	s := standIn(t, cs, perfect)
	defer s.Close()
	rows := run(t, s, cs, 2)
	if len(rows) != 44 || len(s.Requests()) != 88 {
		t.Fatalf("%d rows from %d requests, want 44 from 88", len(rows), len(s.Requests()))
	}
	for _, r := range rows {
		if r.Fidelity != 13 || r.FidelityMax != 13 || !r.ActionOK || r.Problem != "" {
			t.Errorf("%+v: a perfect reader scores 13/13 and acts right", r)
		}
	}
	// Usage passes through unchanged: the stand-in reported 500 + the prompt's bytes.
	reqs := s.Requests()
	if want := 500 + len(reqs[0].Text()); rows[0].PromptTokens != want || rows[0].CompletionTokens != 200 {
		t.Errorf("row tokens %d/%d, want %d/200", rows[0].PromptTokens, rows[0].CompletionTokens, want)
	}
	if rows[0].Judge.PromptTokens != 400 {
		t.Errorf("judge usage %+v", rows[0].Judge)
	}
	cells := readers.Cells(rows)
	if len(cells) != 22 || cells[0].Trials != 2 || cells[0].Mean() != 13 || cells[0].ActionOK != 2 {
		t.Errorf("cells %+v", cells[0])
	}
}

func TestInventedDecisionFailsAction(t *testing.T) {
	cs := cases(t)
	var p3 []readers.Case
	for _, c := range cs {
		if c.Message == "p3" && c.Format == "convention" {
			p3 = append(p3, c)
		}
	}
	// The reader drops facts 2 and 5 and reports the open question as decided (option A).
	s := standIn(t, cs, func(c readers.Case) string {
		var facts []string
		for i, f := range c.Key.Facts {
			if i != 1 && i != 4 {
				facts = append(facts, f)
			}
		}
		b, _ := json.Marshal(map[string]any{"facts": facts, "must_do": c.Expect.MustDo, "by": c.Expect.By, "settled": true})
		return string(b)
	})
	defer s.Close()
	rows := run(t, s, p3, 1)
	r := rows[0]
	if r.Fidelity != 11 || r.FidelityMax != 13 {
		t.Errorf("fidelity %d/%d, want 11/13", r.Fidelity, r.FidelityMax)
	}
	if r.ActionOK || r.SettledOK || !r.MustDoOK || !r.ByOK {
		t.Errorf("%+v: a reader that invents a decision fails the action test on settled alone", r)
	}
}

func TestTruncationCase(t *testing.T) {
	cs := cases(t)
	var trunc []readers.Case
	for _, c := range cs {
		if c.Format == readers.TruncatedFormat {
			trunc = append(trunc, c)
		}
	}
	if len(trunc) != 1 || trunc[0].Message != "p2" || !strings.Contains(trunc[0].Text, "n=10") {
		t.Fatalf("truncation cases %+v", trunc)
	}
	// A reader that acts on the truncated report as if it were whole fails.
	s := standIn(t, cs, func(c readers.Case) string {
		b, _ := json.Marshal(map[string]any{"facts": c.Key.Facts, "must_do": c.Key.Action.MustDo, "by": c.Key.Action.By, "settled": false})
		return string(b)
	})
	defer s.Close()
	if r := run(t, s, trunc, 1)[0]; r.ActionOK || r.ByOK {
		t.Errorf("%+v: acting on the truncated message passed", r)
	}
	s2 := standIn(t, cs, perfect)
	defer s2.Close()
	if r := run(t, s2, trunc, 1)[0]; !r.ActionOK {
		t.Errorf("%+v: acting on nothing failed", r)
	}
}

func TestUnparsableAnswerScoresNothing(t *testing.T) {
	cs := cases(t)[:1]
	s := standIn(t, cs, func(readers.Case) string { return "I'd rather not." })
	defer s.Close()
	r := run(t, s, cs, 1)[0]
	if r.Fidelity != 0 || r.ActionOK || !strings.Contains(r.Problem, "no JSON object") || len(s.Requests()) != 1 {
		t.Errorf("%+v after %d requests", r, len(s.Requests()))
	}
}

// Blind: nothing in a reader's prompt but the framing, the grammar and the message itself;
// no key fact and no format label.
func TestReaderPromptIsBlind(t *testing.T) {
	cs := cases(t)
	for _, c := range cs {
		p := ""
		for _, m := range readers.ReaderMessages(c) {
			p += m.Content + "\n"
		}
		rest := strings.Replace(strings.Replace(p, strings.TrimRight(c.Text, "\n"), "", 1), strings.TrimSpace(c.Grammar), "", 1)
		for _, f := range bench.DefaultFormats() {
			for _, w := range []string{f.Label, "format", "facts.json"} {
				if len(w) > 3 && strings.Contains(strings.ToLower(rest), strings.ToLower(w)) {
					t.Errorf("%s/%s: the prompt names %q outside the message:\n%s", c.Message, c.Format, w, rest)
				}
			}
		}
		for _, f := range c.Key.Facts {
			if strings.Contains(rest, f) {
				t.Errorf("%s/%s: the prompt carries key fact %q", c.Message, c.Format, f)
			}
		}
	}
}

func TestSameBy(t *testing.T) {
	for _, tc := range []struct {
		got, want string
		ok        bool
	}{
		{"20260917T1800Z", "20260917T1800Z", true},
		{" by 20260917T1800Z ", "20260917T1800Z", true},
		{"2026-09-17T18:00Z", "20260917T1800Z", false},
		{"20260919T1200Z", "20260917T1800Z", false},
		{"null", "", true},
		{"", "", true},
		{"20260918T0900Z", "", false},
	} {
		if got := readers.SameBy(tc.got, tc.want); got != tc.ok {
			t.Errorf("SameBy(%q, %q) = %v", tc.got, tc.want, got)
		}
	}
}

func TestParseAnswer(t *testing.T) {
	a, err := readers.ParseAnswer("```json\n{\"facts\":[\"a {b}\", {\"fact\":\"c\"}], \"must_do\":\"x\", \"by\":null, \"settled\":\"false\"}\n```\nThat is all.")
	if err != nil || len(a.Facts) != 2 || a.Facts[0] != "a {b}" || a.Facts[1] != "c" || a.MustDo != "x" || a.By != "" || a.Settled == nil || *a.Settled {
		t.Errorf("%+v %v", a, err)
	}
	if _, err := readers.ParseAnswer(`{"facts": [`); err == nil {
		t.Error("an unclosed object parsed")
	}
	v, err := readers.ParseVerdict(`{"facts":[{"n":1,"present":true},{"n":3,"present":"true"}],"must_do":false}`, 3)
	if err != nil || fmt.Sprint(v.Present) != "[true false true]" || v.MustDo || v.Fidelity() != 2 {
		t.Errorf("%+v %v", v, err)
	}
	if _, err := readers.ParseVerdict(`{"facts":[{"n":14,"present":true}]}`, 13); err == nil {
		t.Error("a verdict on fact 14 of 13 passed")
	}
}

func FuzzParseAnswer(f *testing.F) {
	for _, s := range []string{`{"facts":["a"],"must_do":"x","by":"20260917T1800Z","settled":false}`, "```{\"facts\":[{\"fact\":1}]}```", `{"a":"}"}`, `{`, `}{`, `"{\"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := readers.ParseAnswer(s)
		if err != nil {
			return
		}
		// Whatever parsed survives a round trip through its own JSON.
		b, _ := json.Marshal(a)
		a2, err := readers.ParseAnswer(string(b))
		if err != nil || len(a2.Facts) != len(a.Facts) || a2.MustDo != a.MustDo || a2.By != a.By {
			t.Fatalf("%q → %s → %+v %v", s, b, a2, err)
		}
	})
}

func FuzzParseVerdict(f *testing.F) {
	f.Add(`{"facts":[{"n":1,"present":true}],"must_do":true}`, 13)
	f.Add(`{"facts":[{"n":0}]}`, 1)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1000 {
			return
		}
		v, err := readers.ParseVerdict(s, n)
		if err == nil && (len(v.Present) != n || v.Fidelity() > n) {
			t.Fatalf("%q, %d: %+v", s, n, v)
		}
	})
}
