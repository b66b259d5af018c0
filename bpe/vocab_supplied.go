//go:build parley_novocab

package bpe

// Built without the vocabularies: Supply provides them (see Data).
var o200kData, cl100kData string

// Nor their prebuilt tables: they are built once a vocabulary is supplied.
var o200kTab, cl100kTab string

// Nor the lists of three-byte strings of cut.go: they are built from the tokens.
var o200kTri, cl100kTri string

// Nor the unit tables of units.go: they are built from the tokens.
var o200kUnits, cl100kUnits string
