// Package bench is parley's measurement engine. It produces results as plain data (Go
// structs with JSON tags) and leaves their layout to package report and the CLI.
//
// The format study (Formats) reproduces the tables of the room study on its fixtures: the
// tokens of each message in each format under each tokenizer, tokens per fact, thread
// totals, the grammar tax a reader pays before the first message, the message count after
// which a format with a grammar pays for it, and the token cost of single constructs
// (timestamps, ids, words). The fixtures are embedded (EmbeddedStudy) so the benchmark runs
// anywhere.
//
// The package counts tokens through the Encoding interface, which *bpe.Encoding satisfies;
// it does not depend on a particular tokenizer.
package bench

import (
	"fmt"
	"math"
)

// Encoding counts tokens; *bpe.Encoding is one.
type Encoding interface {
	Name() string
	Count(s string) int
}

// Config selects what Formats measures.
type Config struct {
	// Formats to measure; nil means DefaultFormats(). One of them must be Baseline.
	Formats []Format
	// Encodings to count with, in the order results list them.
	Encodings []Encoding
	// Readers is the number of seats that read every message; 0 means 5.
	Readers int
}

// DefaultReaders is the room size of the study's own grammar-tax example.
const DefaultReaders = 5

// Results is the outcome of the format study.
type Results struct {
	Readers    int            `json:"readers"`
	Baseline   string         `json:"baseline"`
	Rows       []Row          `json:"rows"`
	Threads    []Thread       `json:"threads"`
	Grammar    []GrammarRow   `json:"grammar"`
	Constructs []ConstructRow `json:"constructs"`
}

// Row is one message in one format under one encoding.
type Row struct {
	Message       string  `json:"message"`
	Format        string  `json:"format"`
	Encoding      string  `json:"encoding"`
	Tokens        int     `json:"tokens"`
	TokensPerFact float64 `json:"tokens_per_fact"`
}

// Thread is the whole thread (every message once) in one format under one encoding.
type Thread struct {
	Format        string  `json:"format"`
	Encoding      string  `json:"encoding"`
	Messages      []int   `json:"messages"` // tokens per message, in study order
	Tokens        int     `json:"tokens"`
	Facts         int     `json:"facts"`
	TokensPerFact float64 `json:"tokens_per_fact"`
}

// GrammarRow is the grammar tax of one format under one encoding, and when it pays off.
//
// The model is the study's: every seat in the room holds the grammar, the writer as well
// as the Readers seats that read each message (five readers and a 400-token grammar cost
// 2,400 tokens). Each message saves SavingPerMessage tokens against the baseline for each
// reader. BreakEven is the smallest message count m with
//
//	m × Readers × SavingPerMessage ≥ (Readers + 1) × GrammarTokens
//
// or nil when the format never pays (it costs at least as much per message as the baseline
// and has a grammar, or it is the baseline).
type GrammarRow struct {
	Format           string  `json:"format"`
	Encoding         string  `json:"encoding"`
	Holds            string  `json:"holds"`
	GrammarTokens    int     `json:"grammar_tokens"`
	Readers          int     `json:"readers"`
	TaxTokens        int     `json:"tax_tokens"`
	MeanTokens       float64 `json:"mean_tokens_per_message"`
	SavingPerMessage float64 `json:"saving_per_message"`
	BreakEven        *int    `json:"break_even_messages"`
	Verdict          string  `json:"verdict"`
}

// ConstructRow is the token count of one construct under one encoding.
type ConstructRow struct {
	Kind      string `json:"kind"`
	Construct string `json:"construct"`
	Note      string `json:"note"`
	Encoding  string `json:"encoding"`
	Tokens    int    `json:"tokens"`
}

// Formats runs the format study over st.
func Formats(st *Study, cfg Config) (*Results, error) {
	formats := cfg.Formats
	if formats == nil {
		formats = DefaultFormats()
	}
	readers := cfg.Readers
	if readers == 0 {
		readers = DefaultReaders
	}
	if readers < 0 {
		return nil, fmt.Errorf("bench: readers must be positive, not %d", readers)
	}
	if len(cfg.Encodings) == 0 {
		return nil, fmt.Errorf("bench: no encodings to count with")
	}
	base := -1
	for i, f := range formats {
		if f.Name == Baseline {
			base = i
		}
	}
	if base < 0 {
		return nil, fmt.Errorf("bench: the formats lack the baseline %q", Baseline)
	}

	// Render every message in every format once; the encodings only count.
	texts := make([][]string, len(formats))
	for i, f := range formats {
		texts[i] = make([]string, len(st.Messages))
		for j, m := range st.Messages {
			s, err := f.Render(m)
			if err != nil {
				return nil, fmt.Errorf("bench: render %s as %s: %w", m.Name, f.Name, err)
			}
			texts[i][j] = s
		}
	}

	res := &Results{Readers: readers, Baseline: Baseline}
	facts := st.Facts()
	for _, enc := range cfg.Encodings {
		threads := make([]Thread, len(formats))
		for i, f := range formats {
			th := Thread{Format: f.Name, Encoding: enc.Name(), Facts: facts}
			for j, m := range st.Messages {
				n := enc.Count(texts[i][j])
				th.Messages = append(th.Messages, n)
				th.Tokens += n
				res.Rows = append(res.Rows, Row{
					Message: m.Name, Format: f.Name, Encoding: enc.Name(),
					Tokens: n, TokensPerFact: perFact(n, m.Facts),
				})
			}
			th.TokensPerFact = perFact(th.Tokens, facts)
			threads[i] = th
		}
		res.Threads = append(res.Threads, threads...)
		for i, f := range formats {
			res.Grammar = append(res.Grammar, grammarRow(f, enc, threads[i], threads[base], readers, i == base))
		}
	}
	for _, c := range Constructs() {
		for _, enc := range cfg.Encodings {
			res.Constructs = append(res.Constructs, ConstructRow{
				Kind: c.Kind, Construct: c.Text, Note: c.Note, Encoding: enc.Name(), Tokens: enc.Count(c.Text),
			})
		}
	}
	return res, nil
}

func grammarRow(f Format, enc Encoding, th, base Thread, readers int, isBase bool) GrammarRow {
	msgs := len(th.Messages)
	g := enc.Count(f.Grammar)
	holds := f.GrammarSource
	if holds == "" {
		holds = "nothing"
	}
	saved := base.Tokens - th.Tokens // over the whole thread, per reader
	row := GrammarRow{
		Format: f.Name, Encoding: enc.Name(), Holds: holds, GrammarTokens: g,
		Readers: readers, TaxTokens: (readers + 1) * g,
		MeanTokens:       round2(float64(th.Tokens) / float64(msgs)),
		SavingPerMessage: round2(float64(saved) / float64(msgs)),
	}
	be := breakEven(g, saved, msgs, readers)
	switch {
	case isBase:
		row.Verdict = "baseline"
	case be == nil:
		row.Verdict = "never: no cheaper per message than the baseline"
	case *be == 1:
		row.BreakEven = be
		row.Verdict = "from the first message"
	default:
		row.BreakEven = be
		row.Verdict = fmt.Sprintf("after %d messages", *be)
	}
	return row
}

// breakEven returns the smallest m ≥ 1 with m·R·(saved/msgs) ≥ (R+1)·g, in integers so
// that no rounding can move the answer, or nil when no m satisfies it.
func breakEven(g, saved, msgs, readers int) *int {
	if saved <= 0 {
		return nil // a format no cheaper than the baseline never earns anything back
	}
	need := (readers + 1) * g * msgs
	per := readers * saved
	m := max(1, (need+per-1)/per)
	return &m
}

func perFact(tokens, facts int) float64 {
	if facts == 0 {
		return 0
	}
	return round2(float64(tokens) / float64(facts))
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

// Construct is a single piece of text whose token cost the study tabulated.
type Construct struct {
	Kind string
	Text string
	Note string
}

// Constructs returns the constructs of the cost table: one instant written three ways,
// ids random and legible, an emoji key, common words, a git sha and a UUID. They are
// counted alone, as the study did; inside a line, after a space, a few come out one token
// cheaper or dearer.
func Constructs() []Construct {
	return []Construct{
		{"time", "2026-09-19T12:00:00Z", "extended ISO 8601"},
		{"time", "20260919T1200Z", "basic ISO 8601, the same instant"},
		{"time", "1789819200", "unix seconds, the same instant"},
		{"id", "i_5fBAXDeXWz", "random instance id"},
		{"id", "job-rl-0917", "job id with a date"},
		{"id", "limiter", "a plain word as the id"},
		{"key", "⏰", "an emoji as a key"},
		{"word", "deadline", "common word"},
		{"word", "dl", "its abbreviation"},
		{"word", "request", "common word"},
		{"word", "req", "its abbreviation"},
		{"sha", "3f9a2c1", "short git sha"},
		{"sha", "3f9a2c1e8b7d6c5f4a3b2c1d0e9f8a7b6c5d4e3f", "full git sha"},
		{"uuid", "7c9e6679-7425-40de-944b-e07fc1f90ae7", "UUID v4"},
	}
}
