// Package lab is the format lab's logic: what the /lab page shows about a pasted trace or
// message, computed by the same functions as the CLI (a2c.Benchmark for the figures of
// `parley a2c benchmark`, lint.Message for `parley lint`). It is plain Go, tested as such;
// lab/wasm wraps it for the browser.
package lab

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/parleyhq/parley/a2c"
	"github.com/parleyhq/parley/bpe"
	"github.com/parleyhq/parley/convention"
	"github.com/parleyhq/parley/lint"
	"github.com/parleyhq/parley/trace"
)

// Encodings are the tokenizers every analysis counts in, in the order the page shows them.
var Encodings = []string{"o200k_base", "cl100k_base"}

// Inputs the lab reads besides the trace adapters: JSON lines as `parley a2c encode` reads
// them (session lines, or bare records that form one session).
const (
	AdapterAuto    = "auto"
	AdapterRecords = "records"
)

// Adapters lists what Analyze accepts as adapter.
var Adapters = []string{AdapterAuto, "openai", "toolbench", "swe-agent", AdapterRecords}

// DictionaryFolds is `parley a2c benchmark`'s default --dict-folds, which the lab uses.
const DictionaryFolds = a2c.DefaultDictFolds

// Analysis is what the lab shows about one pasted input.
type Analysis struct {
	Adapter  string     `json:"adapter"`  // the adapter that read the input
	Detected bool       `json:"detected"` // whether Adapter was detected (adapter auto)
	Sessions []Session  `json:"sessions"`
	Figures  []*Figures `json:"figures"` // one per encoding, in Encodings order
}

// Session is one session's texts: the canonical JSON of its records (one a line), the
// same records as one minified JSON array and as TOON, and its a2c encoding per tokenizer.
type Session struct {
	ID           string `json:"id"`
	Records      int    `json:"records"`
	Canonical    string `json:"canonical"`
	MinifiedJSON string `json:"minified_json"`
	TOON         string `json:"toon"`
	TOONError    string `json:"toon_error,omitempty"`
	// A2C holds, per encoding (a2c chooses token-aligned references), the payload and
	// instructions that `parley a2c encode` writes for this session alone, without a
	// dictionary, and whether it decodes back byte for byte.
	A2C map[string]*Encoded `json:"a2c"`
}

// Encoded is one session encoded by a2c/2 with the default options.
type Encoded struct {
	Payload      string `json:"payload"`
	Instructions string `json:"instructions"`
	// Lossless: every record decoded from Payload has the canonical JSON of the record
	// encoded (a2c.Verify), and BadRecords is how many do not.
	Lossless   bool   `json:"lossless"`
	BadRecords int    `json:"bad_records"`
	Error      string `json:"error,omitempty"`
	// Token counts of the texts above and of the session's other renderings.
	PayloadTokens      int `json:"payload_tokens"`
	InstructionTokens  int `json:"instruction_tokens"`
	CanonicalTokens    int `json:"canonical_tokens"`
	MinifiedJSONTokens int `json:"minified_json_tokens"`
	TOONTokens         int `json:"toon_tokens"`
}

// Figures are `parley a2c benchmark --encoding E --json`'s figures for the whole input,
// plus its per-session rows (which the JSON output leaves out).
type Figures struct {
	*a2c.Result
	Rows []a2c.SessionResult `json:"per_session"`
}

// Analyze reads text with adapter (AdapterAuto detects it; name is the file name session
// IDs start from, as `--source name` would give them) and measures it in every encoding.
func Analyze(ctx context.Context, text, adapter, name string) (*Analysis, error) {
	if strings.TrimSpace(text) == "" {
		return nil, errors.New("nothing to analyze: paste a trace (OpenAI chat JSONL, a ToolBench answer file, a SWE-agent .traj) or JSON record lines")
	}
	an := &Analysis{Adapter: adapter}
	if adapter == "" || adapter == AdapterAuto {
		a, ok := trace.Detect([]byte(text))
		if !ok {
			a = AdapterRecords
		}
		an.Adapter, an.Detected = a, true
	}
	if name == "" {
		name = defaultName(an.Adapter)
	}
	in, err := read(an.Adapter, name, text)
	if err != nil {
		return nil, err
	}
	if len(in) == 0 {
		return nil, fmt.Errorf("the %s adapter found no session in the input", an.Adapter)
	}
	counters := make([]*bpe.Encoding, len(Encodings))
	for i, e := range Encodings {
		if counters[i], err = bpe.Get(e); err != nil {
			return nil, err
		}
	}
	for _, s := range in {
		sv := Session{ID: s.ID, Records: len(s.Records), A2C: map[string]*Encoded{}}
		var canon strings.Builder
		for i := range s.Records {
			canon.Write(trace.Canonical(&s.Records[i]))
			canon.WriteByte('\n')
		}
		sv.Canonical = canon.String()
		if sv.MinifiedJSON, err = a2c.MinifiedJSON.Render(s.Records); err != nil {
			return nil, err
		}
		if sv.TOON, err = a2c.TOON.Render(s.Records); err != nil {
			sv.TOON, sv.TOONError = "", err.Error()
		}
		for i, c := range counters {
			e := &Encoded{CanonicalTokens: c.Count(sv.Canonical), MinifiedJSONTokens: c.Count(sv.MinifiedJSON), TOONTokens: c.Count(sv.TOON)}
			enc, bad, err := a2c.Verify(s.ID, s.Records, a2c.Default(c))
			e.BadRecords, e.Lossless = bad, err == nil && bad == 0
			if err != nil {
				e.Error = err.Error()
			}
			if enc != nil {
				e.Payload, e.Instructions = enc.Payload(), enc.Instructions
				e.PayloadTokens, e.InstructionTokens = c.Count(e.Payload), c.Count(e.Instructions)
			}
			sv.A2C[Encodings[i]] = e
		}
		an.Sessions = append(an.Sessions, sv)
	}
	for i, c := range counters {
		res, err := a2c.Benchmark(ctx, in, a2c.BenchmarkOptions{Options: a2c.Default(c), Counter: c, Encoding: Encodings[i], Folds: DictionaryFolds})
		if err != nil {
			return nil, err
		}
		an.Figures = append(an.Figures, &Figures{Result: res, Rows: res.PerSession})
	}
	return an, nil
}

// read turns the input into measurement inputs with the adapter.
func read(adapter, name, text string) ([]a2c.Input, error) {
	if adapter == AdapterRecords {
		rs, err := trace.ReadSessions(strings.NewReader(text))
		if err != nil {
			return nil, err
		}
		in := make([]a2c.Input, len(rs))
		for i, r := range rs {
			in[i] = a2c.Input{ID: r.ID, Records: r.Records}
		}
		return in, nil
	}
	ss, err := trace.Parse(adapter, name, []byte(text))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", adapter, err)
	}
	return a2c.Inputs(ss), nil
}

func defaultName(adapter string) string {
	switch adapter {
	case "openai":
		return "pasted.jsonl"
	case "toolbench":
		return "pasted.json"
	case "swe-agent":
		return "pasted.traj"
	}
	return "pasted"
}

// Lint is `parley lint --json`'s object for one message.
type Lint struct {
	Format      string                  `json:"format"`
	Diagnostics []convention.Diagnostic `json:"diagnostics"`
}

// LintMessage checks one message as `parley lint` does (no roster).
func LintMessage(text string) (*Lint, error) {
	c, err := bpe.Get(convention.TokenEncoding)
	if err != nil {
		return nil, err
	}
	f, d := lint.Message(text, nil, c)
	return &Lint{Format: f, Diagnostics: d}, nil
}
