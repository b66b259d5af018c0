package a2c

import (
	"context"

	"github.com/parleyhq/parley/toon"
	"github.com/parleyhq/parley/trace"
)

// DefaultDictFolds is the benchmark's default k of dictionary cross-validation
// (`parley a2c benchmark --dict-folds`, and the format lab).
const DefaultDictFolds = 2

// BenchmarkOptions is what `parley a2c benchmark` measures with, besides the inputs.
type BenchmarkOptions struct {
	// Options is the codec configuration (Default, plus a dictionary and its charge).
	Options Options
	// Counter counts tokens; Encoding is its name, as the result reports it.
	Counter  Counter
	Encoding string
	// Folds: without Options.Dictionary, k ≥ 2 learns the dictionary by k-fold
	// cross-validation (MeasureFolds); 0 or 1 measures without a dictionary.
	Folds int
	// Progress, when set, is called after each session.
	Progress func(done, total int)
}

// Benchmark is the measurement `parley a2c benchmark` prints and the format lab shows:
// MeasureFolds when there is no dictionary and Folds ≥ 2, Measure otherwise, both against
// the StandardBaselines. One function, so that every edge prints the same figures.
func Benchmark(ctx context.Context, in []Input, bo BenchmarkOptions) (*Result, error) {
	if bo.Options.Dictionary == nil && bo.Folds >= 2 {
		return MeasureFolds(ctx, in, bo.Options, bo.Counter, bo.Encoding, StandardBaselines(), bo.Folds, TrainOptions{}, bo.Progress)
	}
	return Measure(ctx, in, bo.Options, bo.Counter, bo.Encoding, StandardBaselines(), bo.Progress)
}

// TOON renders a session's records as TOON: the minified JSON array re-read and encoded
// by package toon.
var TOON = Baseline{Name: "toon", Render: func(recs []trace.Value) (string, error) {
	text, err := MinifiedJSON.Render(recs)
	if err != nil {
		return "", err
	}
	v, err := toon.ParseJSON([]byte(text))
	if err != nil {
		return "", err
	}
	return toon.Encode(v)
}}

// StandardBaselines are the renderings a2c is compared with besides canonical JSON:
// minified JSON, pretty JSON and TOON.
func StandardBaselines() []Baseline {
	return []Baseline{MinifiedJSON, PrettyJSON, TOON}
}
