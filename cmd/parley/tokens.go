package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"github.com/parleyhq/parley/bpe"
)

const tokensDescription = `
Count the tokens of each input with one of OpenAI's byte-pair encodings, exactly as
tiktoken counts them (encode_ordinary: text that looks like a special token, such as
<|endoftext|>, is ordinary text). Reads standard input when no FILE is given or FILE is -.

The vocabularies are built into parley: no network, no files.

Without --ids, input is read a megabyte at a time and counted in parts cut where the cut
cannot change the count, so a file larger than memory is counted too (a stretch without
such a place, such as one line of no spaces, is held whole). --ids holds the whole input.

Output: the count alone for one input; for several, one "COUNT<TAB>FILE" line each and a
"COUNT<TAB>total" line. --ids adds, after each count line, a line with the token ids
separated by spaces. --json prints one array with an object per input, in input order:
{"file", "encoding", "bytes", "tokens"} and "ids" with --ids.

Encodings: o200k_base (GPT-4o, GPT-4.1, o-series; the default), cl100k_base (GPT-4,
GPT-3.5-turbo, text-embedding-3).`

const tokensExamples = `  parley tokens README.md
  parley tokens --encoding cl100k_base *.md
  echo 'hello world' | parley tokens --ids
  parley tokens --json --ids prompt.txt`

type tokensResult struct {
	File     string `json:"file"`
	Encoding string `json:"encoding"`
	Bytes    int    `json:"bytes"`
	Tokens   int    `json:"tokens"`
	IDs      *[]int `json:"ids,omitempty"`
}

func runTokens(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "tokens", "tokens [--encoding o200k_base|cl100k_base] [--ids] [--json] [FILE...|-]",
		tokensDescription, tokensExamples)
	encName := fs.String("encoding", "o200k_base", "the encoding: o200k_base or cl100k_base")
	withIDs := fs.Bool("ids", false, "also print the token ids")
	asJSON := fs.Bool("json", false, "print a JSON array with one object per input")
	files, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if !knownEncoding(*encName) {
		return usageErrorf("unknown encoding %q: use %s", *encName, strings.Join(bpe.Names(), " or "))
	}
	enc, err := bpe.Get(*encName)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	results := make([]tokensResult, 0, len(files))
	for _, f := range files {
		r := tokensResult{File: f, Encoding: enc.Name()}
		if *withIDs {
			text, err := readInput(e, f)
			if err != nil {
				return err
			}
			ids := enc.Encode(text)
			r.Bytes, r.Tokens, r.IDs = len(text), len(ids), &ids
		} else if r.Tokens, r.Bytes, err = countInput(e, enc, f); err != nil {
			return err
		}
		results = append(results, r)
	}
	if *asJSON {
		return writeTokensJSON(e.stdout, results)
	}
	var out []byte
	total := 0
	for _, r := range results {
		out = strconv.AppendInt(out, int64(r.Tokens), 10)
		if len(results) > 1 {
			out = append(out, '\t')
			out = append(out, r.File...)
		}
		out = append(out, '\n')
		if r.IDs != nil {
			for i, id := range *r.IDs {
				if i > 0 {
					out = append(out, ' ')
				}
				out = strconv.AppendInt(out, int64(id), 10)
			}
			out = append(out, '\n')
		}
		total += r.Tokens
	}
	if len(results) > 1 {
		out = strconv.AppendInt(out, int64(total), 10)
		out = append(out, "\ttotal\n"...)
	}
	_, err = e.stdout.Write(out)
	return err
}

// writeTokensJSON prints the results as a JSON array, one compact object per line.
func writeTokensJSON(w io.Writer, results []tokensResult) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	buf.WriteString("[")
	for i, r := range results {
		if i > 0 {
			buf.WriteString(",")
		}
		buf.WriteString("\n  ")
		if err := enc.Encode(r); err != nil {
			return err
		}
		buf.Truncate(buf.Len() - 1) // Encode's newline
	}
	buf.WriteString("\n]\n")
	_, err := w.Write(buf.Bytes())
	return err
}

func knownEncoding(name string) bool {
	for _, n := range bpe.Names() {
		if n == name {
			return true
		}
	}
	return false
}

// countInput counts the tokens of file f, or of standard input for "-", reading it in
// parts (bpe.CountReader), so that a file larger than memory is counted too.
func countInput(e *env, enc *bpe.Encoding, f string) (tokens, size int, err error) {
	var n int64
	if f == "-" {
		if tokens, n, err = enc.CountReader(e.stdin); err != nil {
			return 0, 0, fmt.Errorf("reading standard input: %w", err)
		}
		return tokens, int(n), nil
	}
	file, err := os.Open(f)
	if err != nil {
		return 0, 0, fmt.Errorf("cannot read %s: %w", f, unwrapPathError(err))
	}
	defer file.Close()
	if tokens, n, err = enc.CountReader(file); err != nil {
		return 0, 0, fmt.Errorf("cannot read %s: %w", f, unwrapPathError(err))
	}
	return tokens, int(n), nil
}

// readInput returns the contents of file f, or of standard input for "-".
func readInput(e *env, f string) (string, error) {
	var b []byte
	var err error
	if f == "-" {
		b, err = io.ReadAll(e.stdin)
		if err != nil {
			return "", fmt.Errorf("reading standard input: %w", err)
		}
	} else {
		b, err = os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("cannot read %s: %w", f, unwrapPathError(err))
		}
	}
	if len(b) == 0 {
		return "", nil
	}
	return unsafe.String(&b[0], len(b)), nil // b is never written again
}

// unwrapPathError drops the *os.PathError wrapper, whose text repeats the file name.
func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
