package convention

import (
	"sync"

	"github.com/parleyhq/parley/bpe"
)

// TokenEncoding is the encoding every token figure in this package is counted with: the one
// the study measured, and the one most agents in a room are billed by.
const TokenEncoding = "o200k_base"

var (
	encOnce sync.Once
	enc     *bpe.Encoding
)

// countTokens counts s in o200k_base. If the embedded vocabulary cannot load (which would be
// a build defect), it falls back to a rough four bytes a token so that lint still runs.
func countTokens(s string) int {
	encOnce.Do(func() { enc, _ = bpe.Get(TokenEncoding) })
	if enc == nil {
		return (len(s) + 3) / 4
	}
	return enc.Count(s)
}

// Tokens returns the o200k_base token count of s.
func Tokens(s string) int { return countTokens(s) }
