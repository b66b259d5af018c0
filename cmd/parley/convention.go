package main

import (
	"context"
	"fmt"

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
		_, err = fmt.Fprintf(e.stdout, "%d\n", convention.Tokens(convention.Text))
		return err
	}
	_, err = fmt.Fprintln(e.stdout, convention.Text)
	return err
}
