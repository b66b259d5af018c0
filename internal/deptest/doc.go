// Package deptest holds no code: its test checks which way the module's imports point. The
// libraries (bpe, convention, aacp, a2c, trace, toon, figure, diag, and the format study in bench) know nothing of the room
// server; the convention parsers link no tokenizer vocabulary; the edges are handed the
// service's renderers rather than importing the service.
package deptest
