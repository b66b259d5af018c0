package bpe

import (
	"testing"

	"github.com/parleyhq/parley/bpe/internal/vocabgen"
)

// TestVocabMatchesLoader checks that the embedded data/*.bin equal what the generator makes
// from tiktoken-go-loader's .tiktoken files (which it checks against OpenAI's pinned SHA-256).
func TestVocabMatchesLoader(t *testing.T) {
	for _, e := range encodings {
		src, err := vocabgen.Source(e.name)
		if err != nil {
			t.Fatal(err)
		}
		want, err := vocabgen.Compact(e.name, src)
		if err != nil {
			t.Fatal(err)
		}
		if string(want) != e.data {
			t.Errorf("%s: data/%s.bin differs from the generator's output; run go generate", e.name, e.name)
		}
	}
}
