// Package bpe implements OpenAI's byte-pair encodings o200k_base and cl100k_base exactly:
// the same token ids as OpenAI's tiktoken (encode_ordinary) for every input, and fast.
//
// Vocabulary data: the token tables are OpenAI's o200k_base.tiktoken and cl100k_base.tiktoken
// (MIT licence, Copyright (c) 2022 OpenAI, Shantanu Jain; from github.com/openai/tiktoken),
// as embedded in github.com/pkoukk/tiktoken-go-loader (MIT licence, Copyright (c) 2023
// ImmortalFog). `go generate` (internal/vocabgen) checks each file against the SHA-256 that
// tiktoken pins for it and writes a compact binary form to data/*.bin, which this package
// embeds; see data/SOURCES.md. Nothing is read from the network or the file system at run
// time.
package bpe
