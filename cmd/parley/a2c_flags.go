package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/parleyhq/parley/a2c"
	"github.com/parleyhq/parley/bpe"
	"github.com/parleyhq/parley/trace"
)

// sourceFlags are the flags every subcommand that reads a source shares.
type sourceFlags struct {
	adapter  *string
	source   *string
	seed     *int64
	sessions *int
}

func addSourceFlags(fs interface {
	String(string, string, string) *string
	Int64(string, int64, string) *int64
	Int(string, int, string) *int
}) sourceFlags {
	return sourceFlags{
		adapter:  fs.String("adapter", "", "how to read the source: "+strings.Join(trace.Adapters, ", ")),
		source:   fs.String("source", "", "a file or a folder (read recursively); not for synthetic"),
		seed:     fs.Int64("seed", 1, "synthetic and synthetic-react only: the generator's seed"),
		sessions: fs.Int("sessions", 40, "synthetic and synthetic-react only: how many sessions to generate"),
	}
}

func (sf sourceFlags) load(ctx context.Context, e *env, verb string) ([]trace.Session, error) {
	if *sf.adapter == "" {
		return nil, usageErrorf("--adapter is required (%s)", strings.Join(trace.Adapters, ", "))
	}
	if !strings.HasPrefix(*sf.adapter, "synthetic") && *sf.source == "" {
		return nil, usageErrorf("--source is required for the %s adapter", *sf.adapter)
	}
	known := false
	for _, a := range trace.Adapters {
		known = known || a == *sf.adapter
	}
	if !known {
		return nil, usageErrorf("unknown adapter %q (%s)", *sf.adapter, strings.Join(trace.Adapters, ", "))
	}
	files, skipped := 0, 0
	ss, err := trace.Load(ctx, *sf.adapter, *sf.source, trace.LoadOptions{
		SyntheticSeed: *sf.seed, SyntheticSessions: *sf.sessions,
		Progress: func(string) { files++ },
		// A file the adapter cannot read says nothing about the codec: report it and
		// go on with the rest.
		Skip: func(path string, err error) {
			skipped++
			fmt.Fprintf(e.stderr, "%s: skipping %s: %v\n", verb, path, err)
		},
	})
	if err != nil {
		return nil, err
	}
	if len(ss) == 0 {
		return nil, &exitError{code: 1, msg: fmt.Sprintf("no sessions found in %s with the %s adapter", *sf.source, *sf.adapter)}
	}
	fmt.Fprintf(e.stderr, "%s: %d sessions from %d files", verb, len(ss), files-skipped)
	if skipped > 0 {
		fmt.Fprintf(e.stderr, " (%d skipped)", skipped)
	}
	fmt.Fprintln(e.stderr)
	return ss, nil
}

func loadDict(path string) (*a2c.Dictionary, error) {
	if path == "" {
		return nil, nil
	}
	return a2c.LoadDictionary(path)
}

// codecOptions builds the default codec configuration of the encode, verify and benchmark
// subcommands from their --encoding and --dict flags.
func codecOptions(encName, dictPath string) (a2c.Options, *bpe.Encoding, error) {
	enc, err := counterFor(encName)
	if err != nil {
		return a2c.Options{}, nil, err
	}
	dict, err := loadDict(dictPath)
	if err != nil {
		return a2c.Options{}, nil, err
	}
	opt := a2c.Default(enc)
	opt.Dictionary = dict
	return opt, enc, nil
}

func counterFor(name string) (*bpe.Encoding, error) {
	if !knownEncoding(name) {
		return nil, usageErrorf("unknown encoding %q: use %s", name, strings.Join(bpe.Names(), " or "))
	}
	return bpe.Get(name)
}
