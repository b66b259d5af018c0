package bpe

import (
	"os"
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

// TestDataSupply checks what the format lab relies on: Data hands out the bytes Get loads,
// and Supply accepts exactly those bytes in a build that embeds them.
func TestDataSupply(t *testing.T) {
	for _, name := range Names() {
		d, err := Data(name)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile("data/" + name + ".bin")
		if err != nil {
			t.Fatal(err)
		}
		if d != string(want) {
			t.Errorf("Data(%s) is not data/%s.bin", name, name)
		}
		if err := Supply(name, d); err != nil {
			t.Errorf("Supply(%s, its own data): %v", name, err)
		}
		if err := Supply(name, d[:len(d)-1]); err == nil {
			t.Errorf("Supply(%s, other bytes) was accepted", name)
		}
	}
	if _, err := Data("p50k_base"); err == nil {
		t.Error("Data of an unknown encoding gave no error")
	}
}
