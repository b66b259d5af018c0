package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/parleyhq/parley/a2c"
	"github.com/parleyhq/parley/trace"
)

const a2cDecodeDescription = `
Decode a2c/2 payloads (as encode writes them, one or many sessions) from standard input
and print each session as a canonical JSON line {"id":…,"records":[…]}. Records that are
not trace records (any JSON object encodes) come out as they went in, in canonical form.`

func runA2CDecode(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "a2c decode", "a2c decode [--dict FILE] < payloads.a2c", a2cDecodeDescription,
		"  parley a2c decode < tau.a2c > tau.jsonl\n  parley a2c encode < s.jsonl | parley a2c decode | cmp - s.jsonl")
	dictPath := fs.String("dict", "", "the dictionary the payloads were encoded with")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	dict, err := loadDict(*dictPath)
	if err != nil {
		return err
	}
	data, err := io.ReadAll(e.stdin)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(data)) > 0 && !bytes.HasPrefix(data, []byte(a2c.Magic)) {
		// A payload of another a2c version gets the header parser's own word on it.
		if first, _, _ := bytes.Cut(data, []byte("\n")); bytes.HasPrefix(first, []byte("a2c/")) {
			if _, err := a2c.ParseHeader(string(first)); err != nil {
				return &exitError{code: 1, msg: err.Error()}
			}
		}
		return &exitError{code: 1, msg: "input does not start with an " + a2c.Magic + " header"}
	}
	w := bufio.NewWriter(e.stdout)
	for i, p := range a2c.SplitStream(string(data)) {
		if err := ctx.Err(); err != nil {
			return err
		}
		id, recs, err := a2c.DecodeSession(p, dict)
		if err != nil {
			return fmt.Errorf("payload %d (%s): %w", i+1, id, err)
		}
		v := trace.Value{Kind: trace.Object, Members: []trace.Member{
			{Key: "id", Value: trace.StringValue(id)},
			{Key: "records", Value: trace.Value{Kind: trace.Array, Items: recs}},
		}}
		w.Write(trace.AppendCanonical(nil, &v))
		w.WriteByte('\n')
	}
	return w.Flush()
}
