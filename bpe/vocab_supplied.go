//go:build parley_novocab

package bpe

// Built without the vocabularies: Supply provides them (see Data).
var o200kData, cl100kData string
