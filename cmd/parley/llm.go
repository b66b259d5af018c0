package main

import (
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/parleyhq/parley/bpe"
	"github.com/parleyhq/parley/llm"
)

// llmFlags are the flags every model-backed command shares. The key is read from
// $PARLEY_LLM_KEY only: a flag would put it in the shell's history and in every process
// listing.
type llmFlags struct {
	endpoint, model, encoding string
	timeout                   time.Duration
	retries, maxCalls         int
	temperature               float64
	dryRun                    bool
}

func addLLMFlags(fs *flag.FlagSet, prefix string) *llmFlags {
	f := &llmFlags{}
	fs.StringVar(&f.endpoint, "endpoint", "", prefix+"the model API's base `URL`, up to /v1 (default $"+llm.EnvURL+"); the key is read from $"+llm.EnvKey)
	fs.StringVar(&f.model, "model", "", prefix+"the model's `NAME` (default $"+llm.EnvModel+")")
	fs.DurationVar(&f.timeout, "timeout", llm.DefaultTimeout, prefix+"how long one request may take, answer included")
	fs.IntVar(&f.retries, "retries", llm.DefaultRetries, prefix+"retries of a call after a 429, a 5xx or a timeout (Retry-After is honoured; 0: none)")
	fs.IntVar(&f.maxCalls, "max-calls", 0, prefix+"the call budget: stop before call `N`+1 (0: as many as the run needs)")
	fs.Float64Var(&f.temperature, "temperature", 0, prefix+"sampling temperature")
	fs.BoolVar(&f.dryRun, "dry-run", false, prefix+"print each request and its token count, send nothing")
	fs.StringVar(&f.encoding, "encoding", "o200k_base", prefix+"the tokenizer that counts a dry run's tokens (o200k_base or cl100k_base)")
	return f
}

// client builds the model client; endpoint and model may be missing in a dry run.
func (f *llmFlags) client(e *env) (*llm.Client, error) {
	enc, err := bpe.Get(f.encoding)
	if err != nil {
		return nil, usageErrorf("--encoding: %v", err)
	}
	cfg := llm.Config{
		Endpoint: f.endpoint, Model: f.model, Key: e.getenv(llm.EnvKey), Temperature: f.temperature,
		Timeout: f.timeout, MaxCalls: f.maxCalls, DryRun: f.dryRun, DryRunOut: e.stdout, Encoding: enc,
		UserAgent: "parley/" + parleyVersion(),
		Log:       func(format string, args ...any) { fmt.Fprintf(e.stderr, format+"\n", args...) },
	}
	if cfg.Endpoint == "" {
		cfg.Endpoint = e.getenv(llm.EnvURL)
	}
	if cfg.Model == "" {
		cfg.Model = e.getenv(llm.EnvModel)
	}
	if f.dryRun {
		// A dry run shows what would be sent; it needs no endpoint to do so.
		if cfg.Endpoint == "" {
			cfg.Endpoint = "http://127.0.0.1:11434/v1"
		}
		if cfg.Model == "" {
			cfg.Model = "MODEL"
		}
	}
	if f.retries < 0 {
		return nil, usageErrorf("--retries must not be negative")
	}
	cfg.Retries = f.retries
	if f.retries == 0 {
		cfg.Retries = -1
	}
	if f.maxCalls < 0 {
		return nil, usageErrorf("--max-calls must not be negative, not %d", f.maxCalls)
	}
	if f.timeout <= 0 {
		return nil, usageErrorf("--timeout must be positive")
	}
	c, err := llm.New(cfg)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	return c, nil
}

// llmExamples are the endpoint lines every model-backed command's examples share.
func llmSetup(cmd string) string {
	return strings.ReplaceAll(`  # OpenAI
  export PARLEY_LLM_URL=https://api.openai.com/v1 PARLEY_LLM_MODEL=gpt-4o-mini
  export PARLEY_LLM_KEY=...        # read from the environment only, never printed
  CMD
  # a local Ollama (no key)
  CMD --endpoint http://127.0.0.1:11434/v1 --model llama3.2`, "CMD", cmd)
}
