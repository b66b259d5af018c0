// Package vocabgen makes the compact vocabularies embedded by package bpe (bpe/data/*.bin)
// from the .tiktoken files embedded in github.com/pkoukk/tiktoken-go-loader, after checking
// each file against the SHA-256 that OpenAI's tiktoken pins for it. Its command is
// ./generate, run by `go generate` in the bpe folder.
//
// Format of NAME.bin (all the mergeable tokens, none of the special ones):
//
//	"PBPE1\n"               magic
//	uint32 little-endian   n, the number of tokens; their ranks are exactly 0..n-1
//	n bytes                the length of token 0, 1, ..., n-1 (every token is 1..255 bytes)
//	the token bytes        token 0's bytes, then token 1's, ... (rank order)
package vocabgen

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// pinned are the SHA-256 digests tiktoken (openai/tiktoken, tiktoken_ext/openai_public.py)
// expects for the files it downloads from openaipublic.blob.core.windows.net/encodings/.
var pinned = map[string]string{
	"cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
	"o200k_base":  "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}

// Names are the encodings made.
var Names = []string{"cl100k_base", "o200k_base"}

// Source returns the .tiktoken file of the encoding name as embedded in tiktoken-go-loader.
func Source(name string) ([]byte, error) { return assets.Assets.ReadFile(name + ".tiktoken") }

// Compact checks a .tiktoken file (base64 token, space, rank per line) against its pinned
// digest and returns the compact form.
func Compact(name string, src []byte) ([]byte, error) {
	sum := sha256.Sum256(src)
	if got := hex.EncodeToString(sum[:]); got != pinned[name] {
		return nil, fmt.Errorf("%s.tiktoken: sha256 %s, want %s", name, got, pinned[name])
	}
	var toks [][]byte
	for i, line := range strings.Split(string(src), "\n") {
		if line == "" {
			continue
		}
		b64, rs, ok := strings.Cut(line, " ")
		if !ok {
			return nil, fmt.Errorf("%s line %d: no rank", name, i+1)
		}
		tok, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %v", name, i+1, err)
		}
		rank, err := strconv.Atoi(rs)
		if err != nil || rank != len(toks) {
			return nil, fmt.Errorf("%s line %d: rank %q, want %d (ranks must be dense)", name, i+1, rs, len(toks))
		}
		if len(tok) == 0 || len(tok) > 255 {
			return nil, fmt.Errorf("%s line %d: token of %d bytes", name, i+1, len(tok))
		}
		toks = append(toks, tok)
	}
	seen := make(map[string]bool, len(toks))
	for r, t := range toks {
		if seen[string(t)] {
			return nil, fmt.Errorf("%s: token of rank %d appears twice", name, r)
		}
		seen[string(t)] = true
	}
	var buf bytes.Buffer
	buf.WriteString("PBPE1\n")
	binary.Write(&buf, binary.LittleEndian, uint32(len(toks)))
	for _, t := range toks {
		buf.WriteByte(byte(len(t)))
	}
	for _, t := range toks {
		buf.Write(t)
	}
	return buf.Bytes(), nil
}
