package room_test

import (
	"github.com/parleyhq/parley/bpe"
	"github.com/parleyhq/parley/convention"
)

// conventionCheck checks s as the room's parse does, with o200k_base token figures.
func conventionCheck(s string) (*convention.Message, []convention.Diagnostic) {
	enc, err := bpe.Get(convention.TokenEncoding)
	if err != nil {
		panic(err)
	}
	return convention.Check(s, convention.Options{Counter: enc})
}
