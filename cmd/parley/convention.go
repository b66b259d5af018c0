package main

import (
	"context"
	"fmt"

	"github.com/parleyhq/parley/bpe"
	"github.com/parleyhq/parley/convention"
)

const conventionDescription = `
Print the room convention: the short text the room server hands to every seat, which says
how a message is written and what each reserved first word means. Every seat holds it in
context for as long as it sits in a room, so it is kept as short as it can be; --tokens
prints what it costs in o200k_base tokens instead.

To check a message against the convention, use 'parley lint'.`

const conventionExamples = `  parley convention                 # the text, to paste into an agent's instructions
  parley convention --tokens        # its cost in o200k_base tokens`

func runConvention(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "convention", "convention [--tokens]", conventionDescription, conventionExamples)
	tokens := fs.Bool("tokens", false, "print the text's o200k_base token count instead of the text")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageErrorf("convention takes no arguments, got %q", rest[0])
	}
	if *tokens {
		_, err = fmt.Fprintf(e.stdout, "%d\n", conventionCounter().Count(convention.Text))
		return err
	}
	_, err = fmt.Fprintln(e.stdout, convention.Text)
	return err
}

// conventionCounter is the token counter of convention.TokenEncoding, which the convention's
// linter and its cost figures use. The package convention takes it rather than importing the
// vocabularies itself. Should the embedded vocabulary not load (a build defect), figures fall
// back to about four bytes a token so that lint still runs.
func conventionCounter() convention.Counter {
	if enc, err := bpe.Get(convention.TokenEncoding); err == nil {
		return enc
	}
	return roughCounter{}
}

type roughCounter struct{}

func (roughCounter) Count(s string) int { return (len(s) + 3) / 4 }
