package bench_test

import (
	"fmt"

	"github.com/parleyhq/parley/bench"
	"github.com/parleyhq/parley/bpe"
)

func ExampleFormats() {
	st, err := bench.LoadStudy(bench.EmbeddedStudy())
	if err != nil {
		panic(err)
	}
	o200k, err := bpe.Get("o200k_base")
	if err != nil {
		panic(err)
	}
	res, err := bench.Formats(st, bench.Config{Encodings: []bench.Encoding{o200k}, Readers: 5})
	if err != nil {
		panic(err)
	}
	for _, th := range res.Threads {
		if th.Format == "convention" || th.Format == bench.Baseline {
			fmt.Printf("%s: %v tokens, %.2f per fact\n", th.Format, th.Messages, th.TokensPerFact)
		}
	}
	// Output:
	// json: [270 299 290] tokens, 22.03 per fact
	// convention: [125 127 147] tokens, 10.23 per fact
}
