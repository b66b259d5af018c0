// Package llmtest is a stand-in for a model endpoint: an HTTP server on 127.0.0.1:0 that
// speaks the Chat Completions wire protocol (POST /v1/chat/completions) and answers from a
// script, so that parley's model-backed commands are tested with no model at hand.
//
// Each request takes the next scripted Reply; when the script is used up, Respond (if set)
// answers. A Reply can be a chat completion with usage figures, an error status with a
// Retry-After header, a malformed body, or a slow answer. Every request is recorded.
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/parleyhq/parley/llm"
)

// Reply is one scripted answer.
type Reply struct {
	// Status is the HTTP status (0: 200).
	Status int
	// Content is the answer's text, for a 200 without Raw.
	Content string
	// Usage is reported as usage.prompt_tokens, completion_tokens and
	// prompt_tokens_details.cached_tokens. NoUsage leaves the usage object out.
	Usage   llm.Usage
	NoUsage bool
	// Raw, when set, is sent as the body instead of a chat completion (malformed JSON, an
	// error object).
	Raw string
	// RetryAfter is sent as the Retry-After header when set ("1", or an HTTP-date).
	RetryAfter string
	// Delay holds the answer back this long (a slow endpoint).
	Delay time.Duration
}

// Request is one request the server got.
type Request struct {
	Method        string
	Path          string
	Authorization string
	ContentType   string
	// Body is the raw body; Model, Messages and Temperature are decoded from it.
	Body        string
	Model       string
	Messages    []llm.Message
	Temperature *float64
	// At is when it arrived.
	At time.Time
}

// Server is the stand-in.
type Server struct {
	// URL is the base URL to give llm.Config.Endpoint: http://127.0.0.1:PORT/v1.
	URL string
	// Respond answers when the script is used up (nil: 500 "no scripted answer").
	Respond func(Request) Reply

	srv    *httptest.Server
	mu     sync.Mutex
	script []Reply
	reqs   []Request
}

// New starts a stand-in answering the given script in order.
func New(script ...Reply) *Server {
	s := &Server{script: script}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + "/v1"
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Script appends replies to the script.
func (s *Server) Script(r ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, r...)
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{
		Method: r.Method, Path: r.URL.Path, Authorization: r.Header.Get("Authorization"),
		ContentType: r.Header.Get("Content-Type"), Body: string(body), At: time.Now(),
	}
	var in struct {
		Model       string        `json:"model"`
		Messages    []llm.Message `json:"messages"`
		Temperature *float64      `json:"temperature"`
	}
	decodeErr := json.Unmarshal(body, &in)
	req.Model, req.Messages, req.Temperature = in.Model, in.Messages, in.Temperature
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()

	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		writeError(w, http.StatusNotFound, "no route "+r.Method+" "+r.URL.Path)
		return
	}
	if decodeErr != nil {
		writeError(w, http.StatusBadRequest, "the body is not JSON: "+decodeErr.Error())
		return
	}

	s.mu.Lock()
	var rep Reply
	switch {
	case len(s.script) > 0:
		rep, s.script = s.script[0], s.script[1:]
	case s.Respond != nil:
		s.mu.Unlock()
		rep = s.Respond(req)
		s.mu.Lock()
	default:
		rep = Reply{Status: http.StatusInternalServerError, Raw: `{"error":{"message":"llmtest: no scripted answer left"}}`}
	}
	s.mu.Unlock()

	if rep.Delay > 0 {
		select {
		case <-time.After(rep.Delay):
		case <-r.Context().Done():
			return
		}
	}
	if rep.RetryAfter != "" {
		w.Header().Set("Retry-After", rep.RetryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	if rep.Raw != "" {
		w.WriteHeader(status)
		io.WriteString(w, rep.Raw)
		return
	}
	if status != http.StatusOK {
		writeError(w, status, http.StatusText(status))
		return
	}
	out := map[string]any{
		"id":      fmt.Sprintf("chatcmpl-%d", len(s.Requests())),
		"object":  "chat.completion",
		"created": time.Now().Unix(),
		"model":   in.Model,
		"choices": []any{map[string]any{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": rep.Content},
			"finish_reason": "stop",
		}},
	}
	if !rep.NoUsage {
		out["usage"] = map[string]any{
			"prompt_tokens":     rep.Usage.PromptTokens,
			"completion_tokens": rep.Usage.CompletionTokens,
			"total_tokens":      rep.Usage.PromptTokens + rep.Usage.CompletionTokens,
			"prompt_tokens_details": map[string]any{
				"cached_tokens": rep.Usage.CachedTokens,
			},
		}
	}
	w.WriteHeader(http.StatusOK)
	json.NewEncoder(w).Encode(out)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "llmtest"}})
}

// Last returns the text of the last message of a request with the given role.
func (r Request) Last(role string) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == role {
			return r.Messages[i].Content
		}
	}
	return ""
}

// Text returns every message's content, joined: for asserting what a prompt said.
func (r Request) Text() string {
	var b strings.Builder
	for _, m := range r.Messages {
		b.WriteString(m.Content)
		b.WriteByte('\n')
	}
	return b.String()
}
