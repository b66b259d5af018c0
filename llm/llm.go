// Package llm is parley's one client for a language model: the OpenAI Chat Completions wire
// protocol (POST {base}/chat/completions), which OpenAI speaks and so do Ollama, vLLM,
// llama.cpp's server, LiteLLM and most gateways.
//
// It is written on net/http and encoding/json alone. parley needs one request shape (model,
// messages, temperature) and four numbers of the answer (the text and the usage figures); an
// SDK would bring a large API surface and its own retry and logging policy, while parley needs
// to own exactly those: which statuses are retried, Retry-After honoured, a call budget, a dry
// run counted with parley's tokenizer, and the guarantee that the key is never printed.
//
// A Client sends one call at a time per Chat; it is safe for concurrent use. The key is held
// only to be put into the Authorization header: it is never part of an error, a dry-run
// printout or the Client's printed form, and any echo of it in an endpoint's answer is
// replaced by [key] before the answer is quoted.
package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/parleyhq/parley/bpe"
)

// Environment variables a command reads when its flags are not given.
const (
	EnvURL   = "PARLEY_LLM_URL"
	EnvModel = "PARLEY_LLM_MODEL"
	EnvKey   = "PARLEY_LLM_KEY"
)

// Defaults of Config's zero values.
const (
	DefaultTimeout = 120 * time.Second
	DefaultRetries = 4
	// DefaultBackoff is the first wait before a retry when the endpoint names none; it
	// doubles with each retry, up to MaxBackoff, with up to a quarter added at random.
	DefaultBackoff = time.Second
	MaxBackoff     = 30 * time.Second
	// MaxRetryAfter caps how long a Retry-After may make a call wait: an endpoint asking for
	// more is answered with an error that says so, rather than a silent hang.
	MaxRetryAfter = 5 * time.Minute
	// quoteLimit is how much of an endpoint's answer an error quotes.
	quoteLimit = 300
)

// Message is one chat message.
type Message struct {
	Role    string `json:"role"` // "system", "user" or "assistant"
	Content string `json:"content"`
}

// System, User and Assistant build messages.
func System(s string) Message    { return Message{Role: "system", Content: s} }
func User(s string) Message      { return Message{Role: "user", Content: s} }
func Assistant(s string) Message { return Message{Role: "assistant", Content: s} }

// request is the body sent: the three members every Chat Completions server knows.
type request struct {
	Model       string    `json:"model"`
	Messages    []Message `json:"messages"`
	Temperature float64   `json:"temperature"`
}

// Usage is what the endpoint reported for one call, unchanged. CachedTokens is
// usage.prompt_tokens_details.cached_tokens (0 when the endpoint does not report it);
// Reported is false when the answer had no usage object at all.
type Usage struct {
	PromptTokens     int  `json:"prompt_tokens"`
	CompletionTokens int  `json:"completion_tokens"`
	CachedTokens     int  `json:"cached_tokens"`
	Reported         bool `json:"-"`
}

// Add sums two usages (Reported when either was).
func (u Usage) Add(v Usage) Usage {
	return Usage{
		PromptTokens: u.PromptTokens + v.PromptTokens, CompletionTokens: u.CompletionTokens + v.CompletionTokens,
		CachedTokens: u.CachedTokens + v.CachedTokens, Reported: u.Reported || v.Reported,
	}
}

// Response is one answer.
type Response struct {
	Content string
	Usage   Usage
	// Model is the model the endpoint says answered (it may name a snapshot of the one asked).
	Model string
	// Attempts is how many requests the call took (1 unless it was retried).
	Attempts int
	// DryRun is true when nothing was sent: Content is empty and Usage holds PromptTokens
	// as parley's tokenizer counts the messages.
	DryRun bool
}

// Config configures a Client. Endpoint and Model are required.
type Config struct {
	// Endpoint is the API's base URL, up to and without /chat/completions:
	// https://api.openai.com/v1, http://127.0.0.1:11434/v1 (Ollama).
	Endpoint string
	Model    string
	// Key is sent as "Authorization: Bearer <Key>" when set.
	Key         string
	Temperature float64
	// Timeout bounds each request, answer included (0: DefaultTimeout).
	Timeout time.Duration
	// Retries is how many times a call is retried after a 429, a 5xx or a timeout
	// (0: DefaultRetries; negative: never).
	Retries int
	// Backoff is the first wait before a retry when the endpoint gives no Retry-After
	// (0: DefaultBackoff).
	Backoff time.Duration
	// MaxCalls is the budget: how many calls the client may make in all (0: no limit).
	// A call is one Chat; its retries are part of it.
	MaxCalls int
	// DryRun prints each request to DryRunOut with its token count and sends nothing.
	DryRun    bool
	DryRunOut io.Writer
	// Encoding counts tokens in a dry run (nil: o200k_base).
	Encoding *bpe.Encoding
	// HTTPClient sends the requests (nil: a client with dial and header timeouts).
	HTTPClient *http.Client
	// UserAgent is sent when set.
	UserAgent string
	// Log, when set, is told of each retry (never with the key).
	Log func(format string, args ...any)
}

// Client calls one model at one endpoint.
type Client struct {
	cfg    Config
	url    string // {Endpoint}/chat/completions
	hc     *http.Client
	enc    *bpe.Encoding
	budget *budget
}

// budget counts calls; clients made by With share one.
type budget struct {
	mu    sync.Mutex
	calls int
	max   int
}

// ErrBudget is returned (wrapped) when a call would exceed Config.MaxCalls.
var ErrBudget = errors.New("the call budget is spent")

// New checks cfg and returns a Client.
func New(cfg Config) (*Client, error) {
	if strings.TrimSpace(cfg.Endpoint) == "" {
		return nil, fmt.Errorf("no endpoint: pass --endpoint or set %s (e.g. https://api.openai.com/v1, or http://127.0.0.1:11434/v1 for Ollama)", EnvURL)
	}
	u, err := url.Parse(strings.TrimSpace(cfg.Endpoint))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("endpoint %q is not an http:// or https:// URL (e.g. http://127.0.0.1:11434/v1)", cfg.Endpoint)
	}
	if u.User != nil {
		return nil, errors.New("the endpoint URL holds credentials: pass the key in " + EnvKey + " instead")
	}
	if strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/chat/completions") {
		return nil, fmt.Errorf("endpoint %q already ends in /chat/completions: give the base URL, up to /v1", cfg.Endpoint)
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, fmt.Errorf("no model: pass --model or set %s (e.g. gpt-4o-mini, or llama3.2 on Ollama)", EnvModel)
	}
	if cfg.MaxCalls < 0 {
		return nil, fmt.Errorf("the call budget must not be negative, not %d", cfg.MaxCalls)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	switch {
	case cfg.Retries == 0:
		cfg.Retries = DefaultRetries
	case cfg.Retries < 0:
		cfg.Retries = 0
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = DefaultBackoff
	}
	c := &Client{cfg: cfg, url: strings.TrimRight(u.String(), "/") + "/chat/completions", hc: cfg.HTTPClient, enc: cfg.Encoding, budget: &budget{max: cfg.MaxCalls}}
	if c.hc == nil {
		c.hc = &http.Client{Transport: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
			TLSHandshakeTimeout: 10 * time.Second,
			IdleConnTimeout:     90 * time.Second,
		}}
	}
	if c.enc == nil {
		if c.enc, err = bpe.Get("o200k_base"); err != nil {
			return nil, err
		}
	}
	if c.cfg.DryRunOut == nil {
		c.cfg.DryRunOut = io.Discard
	}
	return c, nil
}

// String describes the client without its key.
func (c *Client) String() string {
	key := "no key"
	if c.cfg.Key != "" {
		key = "key set"
	}
	return fmt.Sprintf("llm.Client{%s, model %s, %s}", c.url, c.cfg.Model, key)
}

// GoString keeps %#v from printing the key too.
func (c *Client) GoString() string { return c.String() }

// URL is where requests go.
func (c *Client) URL() string { return c.url }

// Model is the model asked for.
func (c *Client) Model() string { return c.cfg.Model }

// DryRun reports whether the client sends nothing.
func (c *Client) DryRun() bool { return c.cfg.DryRun }

// Encoding is the tokenizer that counts dry-run requests.
func (c *Client) Encoding() *bpe.Encoding { return c.enc }

// Calls is how many calls the client (and the clients made from it by With) has made,
// dry-run calls included.
func (c *Client) Calls() int {
	c.budget.mu.Lock()
	defer c.budget.mu.Unlock()
	return c.budget.calls
}

// With returns a client for another endpoint or model ("" keeps this one's) with the same
// key, settings and call budget: a judge beside a reader, counted together.
func (c *Client) With(endpoint, model string) (*Client, error) {
	cfg := c.cfg
	if endpoint != "" {
		cfg.Endpoint = endpoint
	}
	if model != "" {
		cfg.Model = model
	}
	cfg.HTTPClient, cfg.Encoding = c.hc, c.enc
	n, err := New(cfg)
	if err != nil {
		return nil, err
	}
	n.budget = c.budget
	return n, nil
}

// CountTokens counts the message contents with the client's tokenizer: what a dry run
// prints. A provider adds a few tokens per message for the chat template.
func (c *Client) CountTokens(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		n += c.enc.Count(m.Content)
	}
	return n
}

// Chat sends one call and returns the first choice's text and the usage figures.
func (c *Client) Chat(ctx context.Context, msgs []Message) (*Response, error) {
	if len(msgs) == 0 {
		return nil, errors.New("llm: a call needs at least one message")
	}
	b := c.budget
	b.mu.Lock()
	if b.max > 0 && b.calls >= b.max {
		b.mu.Unlock()
		return nil, fmt.Errorf("%w: %d of %d calls made (--max-calls); nothing more was sent", ErrBudget, b.calls, b.max)
	}
	b.calls++
	n := b.calls
	b.mu.Unlock()

	body, err := marshal(request{Model: c.cfg.Model, Messages: msgs, Temperature: c.cfg.Temperature})
	if err != nil {
		return nil, fmt.Errorf("llm: %w", err)
	}
	if c.cfg.DryRun {
		return c.dryRun(n, msgs, body)
	}
	var last error
	attempts := 0
	for attempt := 0; ; attempt++ {
		resp, wait, err := c.once(ctx, body)
		attempts++
		if err == nil {
			resp.Attempts = attempts
			return resp, nil
		}
		last = err
		if wait < 0 || attempt >= c.cfg.Retries {
			break
		}
		if wait == 0 {
			wait = c.backoff(attempt)
		}
		if wait > MaxRetryAfter {
			return nil, fmt.Errorf("%w; it asks to wait %s, longer than parley waits (%s)", err, wait.Round(time.Second), MaxRetryAfter)
		}
		if c.cfg.Log != nil {
			c.cfg.Log("llm: %v; retrying in %s (retry %d of %d)", err, wait.Round(time.Millisecond), attempt+1, c.cfg.Retries)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w (while waiting to retry after: %v)", ctx.Err(), err)
		case <-t.C:
		}
	}
	if attempts > 1 {
		return nil, fmt.Errorf("%w (gave up after %d attempts)", last, attempts)
	}
	return nil, last
}

func (c *Client) backoff(attempt int) time.Duration {
	d := c.cfg.Backoff << min(attempt, 16)
	if d > MaxBackoff || d <= 0 {
		d = MaxBackoff
	}
	return d + time.Duration(rand.Int64N(int64(d)/4+1))
}

// once sends one request. wait is how long to wait before a retry: 0 for the default
// backoff, negative when the error is not worth retrying.
func (c *Client) once(parent context.Context, body []byte) (*Response, time.Duration, error) {
	ctx, cancel := context.WithTimeout(parent, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, -1, fmt.Errorf("llm: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.cfg.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.Key)
	}
	if c.cfg.UserAgent != "" {
		req.Header.Set("User-Agent", c.cfg.UserAgent)
	}
	res, err := c.hc.Do(req)
	if err != nil {
		// The error names the URL, never a header; still, scrub it as everything quoted is.
		msg := c.scrub(err.Error())
		switch {
		case parent.Err() != nil:
			return nil, -1, parent.Err()
		case ctx.Err() != nil:
			return nil, 0, fmt.Errorf("no answer from %s within %s (--timeout)", c.url, c.cfg.Timeout)
		}
		return nil, -1, fmt.Errorf("cannot reach the model endpoint: %s", msg)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 32<<20))
	if err != nil {
		if parent.Err() != nil {
			return nil, -1, parent.Err()
		}
		if ctx.Err() != nil {
			return nil, 0, fmt.Errorf("no complete answer from %s within %s", c.url, c.cfg.Timeout)
		}
		return nil, 0, fmt.Errorf("reading the endpoint's answer: %s", c.scrub(err.Error()))
	}
	if res.StatusCode != http.StatusOK {
		he := &HTTPError{Status: res.StatusCode, StatusText: http.StatusText(res.StatusCode), Body: c.scrub(quote(raw))}
		he.Message = c.scrub(errorMessage(raw))
		if !he.Retryable() {
			return nil, -1, he
		}
		wait, ok := RetryAfter(res.Header.Get("Retry-After"), time.Now())
		if ok {
			he.RetryAfter = wait
			if wait == 0 {
				wait = time.Millisecond // asked to retry at once: do, without the backoff
			}
			return nil, wait, he
		}
		return nil, 0, he
	}
	resp, err := decodeAnswer(raw)
	if err != nil {
		return nil, -1, fmt.Errorf("the endpoint answered 200 but %v; its answer began: %s", err, c.scrub(quote(raw)))
	}
	return resp, 0, nil
}

// dryRun prints the request as it would be sent, and its token count.
func (c *Client) dryRun(n int, msgs []Message, body []byte) (*Response, error) {
	tokens := c.CountTokens(msgs)
	c.budget.mu.Lock() // one printout at a time
	defer c.budget.mu.Unlock()
	w := c.cfg.DryRunOut
	auth := "(no key: PARLEY_LLM_KEY is not set)"
	if c.cfg.Key != "" {
		auth = "Bearer [key from PARLEY_LLM_KEY, not shown]"
	}
	fmt.Fprintf(w, "--- dry run: call %d, not sent ---\n", n)
	fmt.Fprintf(w, "POST %s\nAuthorization: %s\n", c.url, auth)
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, body, "", "  "); err != nil {
		pretty.Write(body)
	}
	fmt.Fprintf(w, "%s\n", pretty.String())
	fmt.Fprintf(w, "tokens: %d in the messages' contents (%s; the endpoint adds a few per message)\n\n", tokens, c.enc.Name())
	return &Response{DryRun: true, Usage: Usage{PromptTokens: tokens}, Model: c.cfg.Model, Attempts: 0}, nil
}

// marshal writes JSON without escaping <, > and & (prompts are full of them, and the dry
// run shows the same bytes that would be sent).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// scrub replaces the key wherever it appears in text an error will quote.
func (c *Client) scrub(s string) string {
	if c.cfg.Key == "" {
		return s
	}
	return strings.ReplaceAll(s, c.cfg.Key, "[key]")
}

// HTTPError is an answer other than 200.
type HTTPError struct {
	Status     int
	StatusText string
	// Message is the endpoint's own error message (error.message in OpenAI's shape), if any.
	Message string
	// Body is the start of the answer, quoted.
	Body string
	// RetryAfter is the endpoint's Retry-After, when it sent one.
	RetryAfter time.Duration
}

// Retryable reports whether the status is worth another try: 429 and the 5xx family.
func (e *HTTPError) Retryable() bool {
	return e.Status == http.StatusTooManyRequests || e.Status >= 500
}

func (e *HTTPError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the endpoint answered %d %s", e.Status, e.StatusText)
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	} else if e.Body != "" {
		fmt.Fprintf(&b, ": %s", e.Body)
	}
	switch e.Status {
	case http.StatusUnauthorized, http.StatusForbidden:
		b.WriteString(" (hint: check PARLEY_LLM_KEY)")
	case http.StatusNotFound:
		b.WriteString(" (hint: check --endpoint ends in /v1 and --model names a model the endpoint serves)")
	}
	return b.String()
}

// errorMessage finds error.message (or error as a string, or message) in an error answer.
func errorMessage(raw []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	if len(v.Error) > 0 {
		var s string
		if json.Unmarshal(v.Error, &s) == nil {
			return clip(s)
		}
		var o struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(v.Error, &o) == nil && o.Message != "" {
			return clip(o.Message)
		}
	}
	return clip(v.Message)
}

// quote renders the start of an answer for an error message.
func quote(raw []byte) string {
	s := strings.TrimSpace(string(raw))
	if s == "" {
		return "(an empty body)"
	}
	return strconv.Quote(clip(s))
}

func clip(s string) string {
	if len(s) <= quoteLimit {
		return s
	}
	cut := quoteLimit
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d bytes more)", len(s)-cut)
}

// answer is the part of a chat completion parley reads.
type answer struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		PromptTokensDetails *struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

// decodeAnswer reads a 200 answer.
func decodeAnswer(raw []byte) (*Response, error) {
	var a answer
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("its answer is not JSON (%v)", err)
	}
	if len(a.Choices) == 0 {
		return nil, errors.New("its answer has no choices")
	}
	if a.Choices[0].Message.Content == nil {
		return nil, errors.New("its first choice has no message content")
	}
	r := &Response{Content: *a.Choices[0].Message.Content, Model: a.Model}
	if a.Usage != nil {
		r.Usage = Usage{PromptTokens: a.Usage.PromptTokens, CompletionTokens: a.Usage.CompletionTokens, Reported: true}
		if a.Usage.PromptTokensDetails != nil {
			r.Usage.CachedTokens = a.Usage.PromptTokensDetails.CachedTokens
		}
	}
	return r, nil
}

// RetryAfter reads a Retry-After header: delay-seconds or an HTTP-date (RFC 9110 10.2.3),
// relative to now. A date in the past means now (0). ok is false when the header is absent
// or unreadable.
func RetryAfter(h string, now time.Time) (time.Duration, bool) {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(h, 10, 64); err == nil {
		if n < 0 {
			return 0, false
		}
		if n > int64(MaxRetryAfter/time.Second)*100 {
			n = int64(MaxRetryAfter/time.Second) * 100 // no overflow; still over the cap
		}
		return time.Duration(n) * time.Second, true
	}
	// Some gateways send fractional seconds; accept them too.
	if f, err := strconv.ParseFloat(h, 64); err == nil && f >= 0 && f < 1e7 {
		return time.Duration(f * float64(time.Second)), true
	}
	t, err := http.ParseTime(h)
	if err != nil {
		return 0, false
	}
	if d := t.Sub(now); d > 0 {
		return d, true
	}
	return 0, true
}
