package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/parleyhq/parley/internal/servertest"
	"github.com/parleyhq/parley/llm"
	"github.com/parleyhq/parley/llm/llmtest"
)

const testKey = "sk-cli-test-key-never-printed-0123456789"

// runLLM runs parley with the model endpoint (and optionally a room server) in the
// environment, and the key set.
func runLLM(t *testing.T, vars map[string]string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] }}
	code := dispatch(t.Context(), e, args)
	if strings.Contains(out.String()+errb.String(), testKey) {
		t.Errorf("parley %s printed the key", strings.Join(args, " "))
	}
	return code, out.String(), errb.String()
}

func llmEnv(s *llmtest.Server) map[string]string {
	return map[string]string{llm.EnvURL: s.URL, llm.EnvModel: "m", llm.EnvKey: testKey}
}

func jsonKeys(t *testing.T, raw string) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatalf("%v in %q", err, raw)
	}
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func TestAACPEncodeLLM(t *testing.T) {
	s := llmtest.New(
		llmtest.Reply{Content: "FETCH|HR|p:1|aacp:1.1|res:emp_salary", Usage: llm.Usage{PromptTokens: 310, CompletionTokens: 15}},
		llmtest.Reply{Content: "FETCH|HR|return:HR-Agent|p:1|aacp:1.1|to:hr-bot|res:emp_salary|period:2024-08", Usage: llm.Usage{PromptTokens: 380, CompletionTokens: 25}},
	)
	defer s.Close()
	code, out, errs := runLLM(t, llmEnv(s), "Ask hr-bot for the August 2024 salaries, to HR-Agent", "aacp", "encode", "--llm", "--json", "--room")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if got, want := jsonKeys(t, out), []string{"attempts", "completion_tokens", "packet", "prompt_tokens", "valid"}; !reflect.DeepEqual(got, want) {
		t.Errorf("--json keys %v, want %v", got, want)
	}
	var v struct {
		Packet                         string
		Valid                          bool
		Attempts                       int
		PromptTokens, CompletionTokens int `json:"-"`
	}
	json.Unmarshal([]byte(out), &v)
	var u struct {
		P int `json:"prompt_tokens"`
		C int `json:"completion_tokens"`
	}
	json.Unmarshal([]byte(out), &u)
	if v.Packet != "FETCH|HR|return:HR-Agent|p:1|aacp:1.1|to:hr-bot|res:emp_salary|period:2024-08" || !v.Valid || v.Attempts != 2 || u.P != 690 || u.C != 40 {
		t.Errorf("%s", out)
	}

	// Three invalid answers: exit 1, no packet printed, the diagnostics on stderr.
	s.Respond = func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Content: "FETCH|HR|p:1"} }
	code, out, errs = runLLM(t, llmEnv(s), "Ask hr-bot for salaries", "aacp", "encode", "--llm")
	if code != 1 || out != "" || !strings.Contains(errs, "no valid packet after 3 attempts") || !strings.Contains(errs, "[return]") {
		t.Errorf("exit %d\nstdout %q\nstderr %s", code, out, errs)
	}

	// A secret in the instruction: refused, nothing sent.
	before := len(s.Requests())
	code, _, errs = runLLM(t, llmEnv(s), "Rotate the DB; the old password: Tr0ub4dor&3", "aacp", "encode", "--llm")
	if code != 1 || !strings.Contains(errs, "a password") || strings.Contains(errs, "Tr0ub4dor") || len(s.Requests()) != before {
		t.Errorf("exit %d, %d requests, stderr %s", code, len(s.Requests())-before, errs)
	}
}

func TestAACPEncodeLLMDryRun(t *testing.T) {
	s := llmtest.New()
	defer s.Close()
	code, out, errs := runLLM(t, llmEnv(s), "Ask hr-bot for salaries", "aacp", "encode", "--llm", "--dry-run")
	if code != 0 || len(s.Requests()) != 0 || !strings.Contains(out, "Authorization: Bearer [key from PARLEY_LLM_KEY, not shown]") || !strings.Contains(out, "dry run: 1 call shown") {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
}

func TestBenchReadersCLI(t *testing.T) {
	s := llmtest.New()
	s.Respond = func(r llmtest.Request) llmtest.Reply {
		if strings.HasPrefix(r.Messages[0].Content, "You grade") {
			return llmtest.Reply{Content: `{"facts":[{"n":1,"present":true},{"n":2,"present":true}],"must_do":true}`, Usage: llm.Usage{PromptTokens: 300, CompletionTokens: 50}}
		}
		return llmtest.Reply{Content: `{"facts":["x"],"must_do":"answer","by":"20260917T1800Z","settled":false}`, Usage: llm.Usage{PromptTokens: 420, CompletionTokens: 120, CachedTokens: 0}}
	}
	defer s.Close()
	dir := t.TempDir()
	code, out, errs := runLLM(t, llmEnv(s), "", "bench", "readers", "--formats", "convention,as-published", "--trials", "2", "--json", "--output", dir, "--judge-model", "judge")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// convention for p1–p3 and the truncation case, twice.
	if len(lines) != 8 {
		t.Fatalf("%d rows:\n%s", len(lines), out)
	}
	want := []string{"action_ok", "completion_tokens", "fidelity", "fidelity_max", "format", "message", "prompt_tokens", "trial"}
	for _, l := range lines {
		if got := jsonKeys(t, l); !reflect.DeepEqual(got, want) {
			t.Fatalf("row keys %v, want %v", got, want)
		}
	}
	var r struct {
		Message, Format                string
		Trial, Fidelity                int
		FidelityMax                    int  `json:"fidelity_max"`
		ActionOK                       bool `json:"action_ok"`
		PromptTokens, CompletionTokens int
	}
	json.Unmarshal([]byte(lines[0]), &r)
	// p1: by matches, settled matches, must_do judged: action right; 2 of 13 facts.
	if r.Message != "p1" || r.Format != "convention" || r.Trial != 1 || r.Fidelity != 2 || r.FidelityMax != 13 || !r.ActionOK {
		t.Errorf("row %s", lines[0])
	}
	// p2's by is 20260918T0900Z: the reader's 20260917T1800Z fails the action.
	json.Unmarshal([]byte(lines[1]), &r)
	if r.Message != "p2" || r.ActionOK {
		t.Errorf("row %s", lines[1])
	}
	var judged int
	for _, q := range s.Requests() {
		if q.Model == "judge" {
			judged++
		}
	}
	if judged != 8 || len(s.Requests()) != 16 {
		t.Errorf("%d judge calls of %d", judged, len(s.Requests()))
	}
	for _, f := range []string{"report.md", "readers.svg", "rows.json", "p1/convention/trial-2/reader-prompt.txt", "p2/as-published/trial-1/judge-answer.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("--output: %v", err)
		}
	}
	rep, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	flat := strings.Join(strings.Fields(string(rep)), " ")
	if !strings.Contains(flat, "| convention | 2/13 (2–2) | 2/13 (2–2) | 2/13 (2–2) |") || !strings.Contains(flat, "| convention | 2/2 | 0/2 | 0/2 |") || !strings.Contains(flat, "| p2 as published (n=10, 9 lines) | | 0/2 | |") {
		t.Errorf("report.md:\n%s", rep)
	}

	// The budget stops the run, and says so.
	code, _, errs = runLLM(t, llmEnv(s), "", "bench", "readers", "--formats", "convention", "--max-calls", "3")
	if code != 1 || !strings.Contains(errs, "--max-calls") {
		t.Errorf("budget: exit %d, %s", code, errs)
	}
}

func TestBenchCacheCLI(t *testing.T) {
	srv := servertest.InProcess(t, servertest.InProcessOptions{})
	srv.CreateRoom(t, "team", nil)
	lead := srv.AddSeat(t, "team", "lead", "agent")
	c := srv.Client(lead)
	for _, body := range []string{
		"v1 note limiter to all n=1\noutcome route test green\n",
		"v1 note limiter to all n=1\ncost 61000 tokens\n",
		"v1 note limiter to all n=1\nrisk redis outage fails closed\n",
	} {
		if _, err := c.Post(t.Context(), nil, "team", []byte(body), ""); err != nil {
			t.Fatal(err)
		}
	}
	s := llmtest.New()
	var calls atomic.Int64
	s.Respond = func(r llmtest.Request) llmtest.Reply {
		n := int(calls.Add(1))
		return llmtest.Reply{Content: "ok", Usage: llm.Usage{PromptTokens: 1000 + 10*n, CachedTokens: 1024 * (n / 2), CompletionTokens: 1}}
	}
	defer s.Close()
	vars := llmEnv(s)
	vars["PARLEY_URL"], vars["PARLEY_TOKEN"] = srv.URL, lead
	code, out, errs := runLLM(t, vars, "", "bench", "cache", "--room", "team", "--readers", "2", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	if got, want := jsonKeys(t, out), []string{"cached_tokens", "calls", "measured_cost", "projected_cost", "prompt_tokens"}; !reflect.DeepEqual(got, want) {
		t.Errorf("keys %v, want %v", got, want)
	}
	var res struct {
		Calls []struct {
			Seq          int64 `json:"seq"`
			PromptTokens int   `json:"prompt_tokens"`
			CachedTokens int   `json:"cached_tokens"`
		} `json:"calls"`
		PromptTokens int `json:"prompt_tokens"`
		CachedTokens int `json:"cached_tokens"`
	}
	json.Unmarshal([]byte(out), &res)
	// 3 messages × 2 readers; the stand-in's figures, unchanged: 1010…1060, cached 0,1024,1024,2048,2048,3072.
	if len(res.Calls) != 6 || res.Calls[5].PromptTokens != 1060 || res.Calls[5].CachedTokens != 3072 || res.PromptTokens != 6210 || res.CachedTokens != 9216 {
		t.Errorf("%s", out)
	}
	// The last read is the room's whole history, as the server serves it.
	if got := s.Requests()[5].Last("user"); got != srv.History(t, "team", lead) {
		t.Errorf("the replay's last prompt is not the room's history:\n%q", got)
	}
	// The text report shows both sides.
	code, out, _ = runLLM(t, vars, "", "bench", "cache", "--room", "team", "--readers", "1")
	if code != 0 || !strings.Contains(out, "measured (provider's usage)") || !strings.Contains(out, "projected (server, history only)") {
		t.Errorf("exit %d\n%s", code, out)
	}
	// Neither source, or both: a usage error.
	if code, _, errs := runLLM(t, vars, "", "bench", "cache"); code != 2 || !strings.Contains(errs, "--room ROOM and --history FILE") {
		t.Errorf("exit %d %s", code, errs)
	}
}
