//go:build parley_novocab

package bpe

// Built without the vocabularies: Supply provides them (see Data).
var o200kData, cl100kData string

// Nor their prebuilt tables: they are built once a vocabulary is supplied.
var o200kTab, cl100kTab string
