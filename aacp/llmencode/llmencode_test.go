package llmencode_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/parleyhq/parley/aacp"
	"github.com/parleyhq/parley/aacp/llmencode"
	"github.com/parleyhq/parley/bpe"
	"github.com/parleyhq/parley/llm"
	"github.com/parleyhq/parley/llm/llmtest"
)

const instruction = "Ask the HR bot for last month's salary report of active employees, as JSON, urgently; send the result to the HR agent."

func client(t *testing.T, s *llmtest.Server) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{Endpoint: s.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRetryLoopFeedsDiagnosticsBack(t *testing.T) {
	s := llmtest.New(
		// No return: and an unknown TASK: two errors.
		llmtest.Reply{Content: "GET|HR|p:1|aacp:1.1|res:emp_salary", Usage: llm.Usage{PromptTokens: 300, CompletionTokens: 20}},
		// Fixed, in a code fence with a preamble, as models write.
		llmtest.Reply{Content: "Here is the packet:\n```\nFETCH|HR|return:HR-Agent|p:1|aacp:1.1|to:hr-bot|res:emp_salary|period:2026-11|filter:status=active|fmt:json\n```", Usage: llm.Usage{PromptTokens: 380, CompletionTokens: 40, CachedTokens: 256}},
	)
	defer s.Close()
	res, err := llmencode.Encode(context.Background(), client(t, s), instruction, llmencode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "FETCH|HR|return:HR-Agent|p:1|aacp:1.1|to:hr-bot|res:emp_salary|period:2026-11|filter:status=active|fmt:json"
	if !res.Valid || res.Packet != want || res.Attempts != 2 {
		t.Fatalf("result %+v", res)
	}
	if u := res.Usage; u.PromptTokens != 680 || u.CompletionTokens != 60 || u.CachedTokens != 256 {
		t.Errorf("usage %+v, want the two calls' sums 680/60/256", u)
	}
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if !strings.Contains(reqs[0].Messages[0].Content, "FETCH PROC FLAG") || !strings.Contains(reqs[0].Last("user"), instruction) {
		t.Errorf("first prompt lacks the card or the instruction:\n%s", reqs[0].Text())
	}
	second := reqs[1].Messages
	if len(second) != 4 || second[2].Role != "assistant" || second[2].Content != "GET|HR|p:1|aacp:1.1|res:emp_salary" {
		t.Fatalf("second call does not carry the first answer back: %+v", second)
	}
	fb := second[3].Content
	for _, w := range []string{"unknown TASK `GET`", "[task]", "[return]", "(fix: return:<seat>)"} {
		if !strings.Contains(fb, w) {
			t.Errorf("feedback lacks %q:\n%s", w, fb)
		}
	}
}

func TestNeverReturnsAnInvalidPacket(t *testing.T) {
	bad := "FETCH|HR|p:1|res:emp_salary" // no return:, no aacp:
	s := llmtest.New()
	s.Respond = func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Content: bad} }
	defer s.Close()
	res, err := llmencode.Encode(context.Background(), client(t, s), instruction, llmencode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Valid || res.Packet != "" || res.Attempts != llmencode.MaxAttempts || len(s.Requests()) != 3 {
		t.Fatalf("result %+v after %d requests", res, len(s.Requests()))
	}
	codes := map[string]bool{}
	for _, d := range res.Diagnostics {
		codes[d.Code] = true
	}
	if !codes["return"] || !codes["aacp"] {
		t.Errorf("last diagnostics %+v lack return and aacp", res.Diagnostics)
	}
	// The third call carries both earlier answers and both feedbacks.
	if n := len(s.Requests()[2].Messages); n != 6 {
		t.Errorf("third call has %d messages, want 6", n)
	}
}

func TestRoomRequiresTo(t *testing.T) {
	s := llmtest.New(
		llmtest.Reply{Content: "FETCH|HR|return:HR-Agent|p:1|aacp:1.1|res:emp_salary"},
		llmtest.Reply{Content: "FETCH|HR|return:HR-Agent|p:1|aacp:1.1|to:hr-bot|res:emp_salary"},
	)
	defer s.Close()
	res, err := llmencode.Encode(context.Background(), client(t, s), instruction, llmencode.Options{Validate: aacp.Options{RequireTo: true}})
	if err != nil || !res.Valid || res.Attempts != 2 {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestSensitiveRefusedBeforeAnyCall(t *testing.T) {
	s := llmtest.New()
	defer s.Close()
	for _, text := range []string{
		"Reset the VPN for mara, her password: hunter2hunter2",
		"Deploy with the key sk-proj-abcdefghijklmnopqrstuvwx12345",
		"Refund card 4111 1111 1111 1111 today",
		"Email the report to mara@example.com",
		"connect to postgres://app:s3cret@db.internal/prod",
	} {
		_, err := llmencode.Encode(context.Background(), client(t, s), text, llmencode.Options{})
		var se *llmencode.SensitiveError
		if !errors.As(err, &se) {
			t.Errorf("%q: error %v, want a refusal", text, err)
			continue
		}
		for _, secret := range []string{"hunter2", "abcdefghij", "4111", "mara@", "s3cret"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the refusal quotes the value: %v", err)
			}
		}
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("%d requests sent for instructions with secrets", n)
	}
	// Talking about passwords and tokens is not a secret.
	if _, _, _, ok := aacp.SensitiveText("Rotate the API token budget of 150000 tokens; the password is required, the pin is reset."); ok {
		t.Error("ordinary words refused")
	}
}

func TestDryRunMakesOneRequestShown(t *testing.T) {
	s := llmtest.New()
	defer s.Close()
	var out strings.Builder
	c, err := llm.New(llm.Config{Endpoint: s.URL, Model: "m", DryRun: true, DryRunOut: &out})
	if err != nil {
		t.Fatal(err)
	}
	res, err := llmencode.Encode(context.Background(), c, instruction, llmencode.Options{})
	if err != nil || !res.DryRun || res.Attempts != 1 || res.Packet != "" || len(s.Requests()) != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	enc, _ := bpe.Get("o200k_base")
	want := 0
	for _, m := range llmencode.Messages(instruction, aacp.Options{}) {
		want += enc.Count(m.Content)
	}
	if res.Usage.PromptTokens != want {
		t.Errorf("dry run counted %d tokens, want %d", res.Usage.PromptTokens, want)
	}
}

// The card names every task and domain the validator knows, and costs what the README says.
func TestCard(t *testing.T) {
	for _, w := range append(append([]string{}, aacp.Tasks...), aacp.Domains...) {
		if !strings.Contains(llmencode.Card, " "+w) {
			t.Errorf("card lacks %s", w)
		}
	}
	enc, _ := bpe.Get("o200k_base")
	if n := enc.Count(llmencode.Card); n < 150 || n > 300 {
		t.Errorf("card is %d o200k_base tokens; keep it compact (150–300)", n)
	}
}

func TestExtract(t *testing.T) {
	for in, want := range map[string]string{
		"FETCH|HR|return:a|aacp:1.1":                   "FETCH|HR|return:a|aacp:1.1",
		"```text\nFETCH|HR|return:a|aacp:1.1\n```":     "FETCH|HR|return:a|aacp:1.1",
		"Sure!\n\n`FETCH|HR|return:a|aacp:1.1`\nDone.": "FETCH|HR|return:a|aacp:1.1",
		"FETCH|HR|return:a|\naacp:1.1":                 "FETCH|HR|return:a|aacp:1.1",
		"I cannot do that.":                            "I cannot do that.",
		"   \n":                                        "",
	} {
		if got := llmencode.Extract(in); got != want {
			t.Errorf("Extract(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzExtract(f *testing.F) {
	for _, s := range []string{"FETCH|HR|return:a|aacp:1.1", "```\nX|Y|\nz:1\n```", "", "|||", "A|\n|\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := llmencode.Extract(s)
		if strings.Contains(got, "\n") {
			t.Fatalf("Extract(%q) = %q spans lines", s, got)
		}
		if p, d := aacp.Check(got, aacp.Options{}); !hasErr(d) {
			// Whatever is accepted round-trips through the canonical form.
			if _, d2 := aacp.Check(p.String(), aacp.Options{}); hasErr(d2) {
				t.Fatalf("valid %q, invalid canonical %q", got, p.String())
			}
		}
	})
}

func hasErr(ds []aacp.Diagnostic) bool {
	for _, d := range ds {
		if d.Severity == "error" {
			return true
		}
	}
	return false
}
