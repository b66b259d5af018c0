// Package bpe implements OpenAI's byte-pair encodings o200k_base and cl100k_base exactly
// (the token ids of OpenAI's tiktoken, encode_ordinary, for every input) and fast.
//
//	enc, err := bpe.Get("o200k_base")
//	ids := enc.Encode("hello world") // [24912 2375]
//	n := enc.Count(text)              // len(enc.Encode(text)), allocating nothing
//
// Text that looks like a special token, such as "<|endoftext|>", is ordinary text.
//
// # Exactness
//
// Encoding is tiktoken's two steps. The pre-tokenizer splits the text into pieces with each
// encoding's regular expression; here each is a hand-written matcher with the semantics of
// the regex under tiktoken's engine (leftmost-first alternation, greedy backtracking
// quantifiers, \s+(?!\S), case-insensitive contractions), checked against Go's regexp
// running the original patterns. Then each piece that is not itself a token is merged
// byte-pair by byte-pair, the lowest rank first, the leftmost on a tie.
//
// Character classes (\p{L}, \p{Lu}, \p{N}, \p{M}, \s...) follow Unicode 16.0.0, the version of
// the regex crate tiktoken is built with; Go 1.26's unicode package has 15.0.0, so the
// classes are generated data (unicode16.go; internal/ucdgen) that agree with Go's tables on
// every code point Go's version assigns. \s is Unicode White_Space, which includes U+0085.
// Tokens starting with EF BB BF (U+FEFF) are ordinary tokens.
//
// Invalid UTF-8 (which tiktoken's str input cannot hold): each byte that does not start a
// valid sequence is a character of its own that splits like U+FFFD (not a letter, number or
// space) and is encoded as its own byte, so Decode(Encode(s)) == s for every s. (An API
// client that sends such text usually replaces the bytes by U+FFFD first; count that text to
// match.)
//
// # Speed
//
// The vocabularies are embedded in a compact form, and beside it the hash tables exactly as
// they would be built (data/*.tab), so that the first Get of an encoding only reads lengths
// and takes the tables as they are. The pre-tokenizers decode ASCII without a table and
// other characters with one table lookup. Token lookups go to open-addressing tables keyed by
// the token bytes whose slots hold a token's first 8 bytes (most lookups touch one cache
// line): a small one for the 8192 lowest ranks, which are the frequent tokens, and one for
// the rest, behind a Bloom filter that answers most failed lookups from L2; pieces and merge
// candidates of 3 to 8 bytes are hashed and looked up without a call, except merge
// candidates of 3 bytes (most of random letters'): they go to a table of their own, a bitmap
// of first byte pairs and a row of 256 bits for each, where similar strings lie close. A piece of up to
// 24 bytes that is not a token is looked up in a small cache of recently merged pieces (a
// piece's tokens depend only on its bytes; text repeats its words) before it is merged.
// Pieces up to 48 bytes merge on the stack, the lowest pair found through the maxima of
// blocks of eight pairs (blocks.go); longer ones with sorted initial pairs and a heap,
// O(n log n). Pieces of 256 bytes or more are first cut where no
// token can reach across (no two-byte token there, and neither three-byte string around it
// inside any token: cut.go), which splits random letters, white space or punctuation into
// segments of a few bytes, each merged alone (through block maxima, two levels of them up to
// 1 KiB). Their merges' candidates, mostly no token, are first read in two bitmaps of hashes
// of each token's length and end bytes, with no branch on the candidate's length (cut.go).
// A segment of 16 KiB or more (a megabyte of spaces, a long run with no cut) merges window by
// window, each window cut where its own merge puts a token boundary, the junctions proved not
// to change the result and a window equal to the previous one not merged again (chunked.go),
// so that per-byte cost and memory stay flat however long a piece is. Count
// allocates nothing in steady state; CountReader counts a stream a megabyte at a time
// (stream.go).
//
// # Data
//
// The token tables are OpenAI's o200k_base.tiktoken and cl100k_base.tiktoken (MIT licence,
// Copyright (c) 2022 OpenAI, Shantanu Jain; github.com/openai/tiktoken), as embedded in
// github.com/pkoukk/tiktoken-go-loader (MIT licence, Copyright (c) 2023 ImmortalFog).
// `go generate` (internal/vocabgen) checks each file against the SHA-256 that tiktoken pins
// and writes a compact binary form to data/*.bin, which this package embeds, with the tables
// built from it in data/*.tab (TestTables checks them); see data/SOURCES.md. Nothing is read from the network or the file system at run time.
package bpe
