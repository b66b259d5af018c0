package llm_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/llm"
	"github.com/parleyhq/parley/llm/llmtest"
)

const secretKey = "sk-test-DO-NOT-PRINT-0123456789abcdef"

func newClient(t *testing.T, s *llmtest.Server, mod func(*llm.Config)) *llm.Client {
	t.Helper()
	cfg := llm.Config{Endpoint: s.URL, Model: "m1", Key: secretKey, Backoff: 5 * time.Millisecond, Timeout: 2 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	c, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestChatWireAndUsagePassThrough(t *testing.T) {
	s := llmtest.New(llmtest.Reply{Content: "hello", Usage: llm.Usage{PromptTokens: 1234, CompletionTokens: 56, CachedTokens: 1024}})
	defer s.Close()
	c := newClient(t, s, func(c *llm.Config) { c.Temperature = 0.25 })
	resp, err := c.Chat(context.Background(), []llm.Message{llm.System("be brief"), llm.User("hi")})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "hello" {
		t.Errorf("content %q", resp.Content)
	}
	want := llm.Usage{PromptTokens: 1234, CompletionTokens: 56, CachedTokens: 1024, Reported: true}
	if resp.Usage != want {
		t.Errorf("usage %+v, want %+v", resp.Usage, want)
	}
	reqs := s.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Method != "POST" || r.Path != "/v1/chat/completions" || r.ContentType != "application/json" {
		t.Errorf("request %s %s %s", r.Method, r.Path, r.ContentType)
	}
	if r.Authorization != "Bearer "+secretKey {
		t.Errorf("Authorization %q", r.Authorization)
	}
	if r.Model != "m1" || len(r.Messages) != 2 || r.Messages[0].Role != "system" || r.Messages[1].Content != "hi" {
		t.Errorf("body %s", r.Body)
	}
	if r.Temperature == nil || *r.Temperature != 0.25 {
		t.Errorf("temperature missing or wrong in %s", r.Body)
	}
}

func TestNoKeyNoAuthorization(t *testing.T) {
	s := llmtest.New(llmtest.Reply{Content: "ok"})
	defer s.Close()
	c := newClient(t, s, func(c *llm.Config) { c.Key = "" })
	if _, err := c.Chat(context.Background(), []llm.Message{llm.User("x")}); err != nil {
		t.Fatal(err)
	}
	if a := s.Requests()[0].Authorization; a != "" {
		t.Errorf("Authorization %q sent without a key", a)
	}
}

func TestNoUsageReportedIsZero(t *testing.T) {
	s := llmtest.New(llmtest.Reply{Content: "ok", NoUsage: true})
	defer s.Close()
	resp, err := newClient(t, s, nil).Chat(context.Background(), []llm.Message{llm.User("x")})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage != (llm.Usage{}) {
		t.Errorf("usage %+v from an answer without one", resp.Usage)
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	s := llmtest.New(
		llmtest.Reply{Status: 429, RetryAfter: "1"},
		llmtest.Reply{Status: 503},
		llmtest.Reply{Content: "done", Usage: llm.Usage{PromptTokens: 7}},
	)
	defer s.Close()
	var logged []string
	c := newClient(t, s, func(c *llm.Config) {
		c.Log = func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }
	})
	resp, err := c.Chat(context.Background(), []llm.Message{llm.User("x")})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "done" || resp.Attempts != 3 {
		t.Errorf("content %q after %d attempts", resp.Content, resp.Attempts)
	}
	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	// The 429 asked for one second: the second request came no sooner. The 503 named no wait,
	// so the backoff (5 ms here) applies.
	if gap := reqs[1].At.Sub(reqs[0].At); gap < time.Second {
		t.Errorf("retried %s after a 429 with Retry-After: 1", gap)
	}
	if gap := reqs[2].At.Sub(reqs[1].At); gap > 900*time.Millisecond {
		t.Errorf("waited %s after a 503 without Retry-After", gap)
	}
	if c.Calls() != 1 {
		t.Errorf("%d calls counted for one call with retries", c.Calls())
	}
	if len(logged) != 2 || !strings.Contains(logged[0], "429") {
		t.Errorf("retry log %q", logged)
	}
	for _, l := range logged {
		if strings.Contains(l, secretKey) {
			t.Errorf("the key reached the log: %q", l)
		}
	}
}

func TestRetryAfterForms(t *testing.T) {
	now := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		h    string
		want time.Duration
		ok   bool
	}{
		{"3", 3 * time.Second, true},
		{" 0 ", 0, true},
		{"1.5", 1500 * time.Millisecond, true},
		{"Tue, 01 Dec 2026 20:00:07 GMT", 7 * time.Second, true},
		{"Tue, 01 Dec 2026 19:00:00 GMT", 0, true}, // past: at once
		{"", 0, false},
		{"-4", 0, false},
		{"soon", 0, false},
	} {
		got, ok := llm.RetryAfter(tc.h, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("RetryAfter(%q) = %s, %v; want %s, %v", tc.h, got, ok, tc.want, tc.ok)
		}
	}
}

func TestGivesUpAfterRetries(t *testing.T) {
	s := llmtest.New()
	s.Respond = func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Status: 500, Raw: `{"error":{"message":"model overloaded"}}`}
	}
	defer s.Close()
	c := newClient(t, s, func(c *llm.Config) { c.Retries = 2 })
	_, err := c.Chat(context.Background(), []llm.Message{llm.User("x")})
	if err == nil {
		t.Fatal("no error after three 500s")
	}
	if got := len(s.Requests()); got != 3 {
		t.Errorf("%d requests, want 1 + 2 retries", got)
	}
	for _, want := range []string{"500", "model overloaded", "gave up after 3 attempts"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestClientErrorNotRetried(t *testing.T) {
	// The endpoint echoes the key back, as some gateways do; the error must not repeat it.
	s := llmtest.New(llmtest.Reply{Status: 401, Raw: `{"error":{"message":"Incorrect API key provided: ` + secretKey + `"}}`})
	defer s.Close()
	_, err := newClient(t, s, nil).Chat(context.Background(), []llm.Message{llm.User("x")})
	var he *llm.HTTPError
	if !errors.As(err, &he) || he.Status != 401 {
		t.Fatalf("error %v, want a 401 HTTPError", err)
	}
	if len(s.Requests()) != 1 {
		t.Errorf("a 401 was retried")
	}
	if strings.Contains(err.Error(), secretKey) {
		t.Errorf("the error quotes the key: %v", err)
	}
	if !strings.Contains(err.Error(), "Incorrect API key provided: [key]") || !strings.Contains(err.Error(), "PARLEY_LLM_KEY") {
		t.Errorf("error %q does not quote the endpoint or hint at the key", err)
	}
}

func TestMalformedJSON(t *testing.T) {
	s := llmtest.New(llmtest.Reply{Raw: `{"choices": [ {"message": {"content": "cut off`})
	defer s.Close()
	_, err := newClient(t, s, nil).Chat(context.Background(), []llm.Message{llm.User("x")})
	if err == nil {
		t.Fatal("no error for a malformed answer")
	}
	for _, want := range []string{"answered 200 but its answer is not JSON", `"{\"choices\": [ {\"message\": {\"content\": \"cut off"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if len(s.Requests()) != 1 {
		t.Errorf("a malformed answer was retried")
	}
}

func TestNoChoices(t *testing.T) {
	s := llmtest.New(llmtest.Reply{Raw: `{"choices":[]}`})
	defer s.Close()
	_, err := newClient(t, s, nil).Chat(context.Background(), []llm.Message{llm.User("x")})
	if err == nil || !strings.Contains(err.Error(), "no choices") {
		t.Fatalf("error %v", err)
	}
}

func TestLongErrorBodyTruncated(t *testing.T) {
	s := llmtest.New(llmtest.Reply{Status: 400, Raw: strings.Repeat("x", 5000)})
	defer s.Close()
	_, err := newClient(t, s, nil).Chat(context.Background(), []llm.Message{llm.User("x")})
	if err == nil || len(err.Error()) > 500 || !strings.Contains(err.Error(), "bytes more") {
		t.Fatalf("error of %d bytes: %.200v", len(err.Error()), err)
	}
}

func TestSlowAnswerTimesOutAndRetries(t *testing.T) {
	s := llmtest.New(llmtest.Reply{Delay: 2 * time.Second, Content: "late"}, llmtest.Reply{Content: "on time"})
	defer s.Close()
	c := newClient(t, s, func(c *llm.Config) { c.Timeout = 200 * time.Millisecond })
	resp, err := c.Chat(context.Background(), []llm.Message{llm.User("x")})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "on time" || resp.Attempts != 2 {
		t.Errorf("got %q after %d attempts", resp.Content, resp.Attempts)
	}
	// With no retries the timeout is the error, and says which flag sets it.
	s.Script(llmtest.Reply{Delay: 2 * time.Second})
	c = newClient(t, s, func(c *llm.Config) { c.Timeout = 100 * time.Millisecond; c.Retries = -1 })
	_, err = c.Chat(context.Background(), []llm.Message{llm.User("x")})
	if err == nil || !strings.Contains(err.Error(), "--timeout") {
		t.Errorf("error %v", err)
	}
}

func TestBudget(t *testing.T) {
	s := llmtest.New()
	s.Respond = func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Content: "ok"} }
	defer s.Close()
	c := newClient(t, s, func(c *llm.Config) { c.MaxCalls = 2 })
	for i := range 2 {
		if _, err := c.Chat(context.Background(), []llm.Message{llm.User("x")}); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	_, err := c.Chat(context.Background(), []llm.Message{llm.User("x")})
	if !errors.Is(err, llm.ErrBudget) || !strings.Contains(err.Error(), "2 of 2 calls") {
		t.Fatalf("third call: %v", err)
	}
	if n := len(s.Requests()); n != 2 {
		t.Errorf("%d requests reached the endpoint under a budget of 2", n)
	}
}

func TestDryRunSendsNothingAndHidesKey(t *testing.T) {
	s := llmtest.New()
	defer s.Close()
	var out bytes.Buffer
	c := newClient(t, s, func(c *llm.Config) { c.DryRun = true; c.DryRunOut = &out })
	msgs := []llm.Message{llm.System("You are terse."), llm.User("Say hello to the team.")}
	resp, err := c.Chat(context.Background(), msgs)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Requests()) != 0 {
		t.Fatal("a dry run sent a request")
	}
	// Counted independently: "You are terse." is 4 o200k_base tokens and "Say hello to the
	// team." is 6 (tiktoken).
	if !resp.DryRun || resp.Usage.PromptTokens != 10 {
		t.Errorf("dry run %+v, want 10 prompt tokens", resp)
	}
	text := out.String()
	for _, want := range []string{"POST " + s.URL + "/chat/completions", `"model": "m1"`, "Say hello to the team.", "tokens: 10", "o200k_base", "not shown"} {
		if !strings.Contains(text, want) {
			t.Errorf("dry run printout lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, secretKey) || strings.Contains(fmt.Sprintf("%v %+v %#v", c, c, c), secretKey) {
		t.Error("the key was printed")
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  llm.Config
		want string
	}{
		{llm.Config{Model: "m"}, "PARLEY_LLM_URL"},
		{llm.Config{Endpoint: "127.0.0.1:11434", Model: "m"}, "not an http"},
		{llm.Config{Endpoint: "http://127.0.0.1:1/v1/chat/completions", Model: "m"}, "base URL"},
		{llm.Config{Endpoint: "http://u:p@127.0.0.1:1/v1", Model: "m"}, "credentials"},
		{llm.Config{Endpoint: "http://127.0.0.1:1/v1"}, "PARLEY_LLM_MODEL"},
	} {
		_, err := llm.New(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want an error saying %q", tc.cfg, err, tc.want)
		}
	}
}

func TestUnreachable(t *testing.T) {
	s := llmtest.New()
	url := s.URL
	s.Close()
	c, err := llm.New(llm.Config{Endpoint: url, Model: "m", Key: secretKey})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Chat(context.Background(), []llm.Message{llm.User("x")})
	if err == nil || !strings.Contains(err.Error(), "cannot reach") || strings.Contains(err.Error(), secretKey) {
		t.Fatalf("error %v", err)
	}
}

func TestWithSharesTheBudget(t *testing.T) {
	s := llmtest.New()
	s.Respond = func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Content: "ok"} }
	defer s.Close()
	reader := newClient(t, s, func(c *llm.Config) { c.MaxCalls = 3 })
	judge, err := reader.With("", "judge-model")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*llm.Client{reader, judge, reader} {
		if _, err := c.Chat(context.Background(), []llm.Message{llm.User("x")}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := judge.Chat(context.Background(), []llm.Message{llm.User("x")}); !errors.Is(err, llm.ErrBudget) {
		t.Fatalf("fourth call under a shared budget of 3: %v", err)
	}
	reqs := s.Requests()
	if len(reqs) != 3 || reqs[1].Model != "judge-model" || reqs[1].Authorization != "Bearer "+secretKey {
		t.Errorf("requests %+v", reqs)
	}
}

func TestRetryAfterTooLongIsAnError(t *testing.T) {
	s := llmtest.New(llmtest.Reply{Status: 429, RetryAfter: "3600"})
	defer s.Close()
	start := time.Now()
	_, err := newClient(t, s, nil).Chat(context.Background(), []llm.Message{llm.User("x")})
	if err == nil || !strings.Contains(err.Error(), "asks to wait 1h0m0s, longer than parley waits") || time.Since(start) > 5*time.Second {
		t.Fatalf("error %v after %s", err, time.Since(start))
	}
	if len(s.Requests()) != 1 {
		t.Errorf("%d requests", len(s.Requests()))
	}
}
