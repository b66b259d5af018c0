package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// errHelpShown is returned by parseFlags when --help was asked for and printed: exit 0.
var errHelpShown = errors.New("help shown")

// newFlags returns a FlagSet whose --help prints usage (one line), a description that
// teaches, the flags, and examples.
func newFlags(e *env, name, usage, description, examples string) *flag.FlagSet {
	fs := flag.NewFlagSet("parley "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		w := e.stdout
		fmt.Fprintf(w, "Usage: parley %s\n\n%s\n", usage, strings.TrimSpace(description))
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintln(w, "\nFlags:")
			fs.SetOutput(w)
			fs.PrintDefaults()
			fs.SetOutput(io.Discard)
		}
		if examples != "" {
			fmt.Fprintf(w, "\nExamples:\n%s\n", strings.TrimRight(examples, "\n"))
		}
	}
	return fs
}

// parseFlags parses args, allowing flags after positional arguments too
// (`parley tokens a.txt --json`). It returns errHelpShown after printing help, and a usage
// error (exit 2) for unknown or malformed flags.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	// flag.FlagSet.Parse calls Usage itself on -help and on every error; silence that and
	// print the help once, only when it was asked for.
	usage := fs.Usage
	fs.Usage = func() {}
	defer func() { fs.Usage = usage }()
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				usage()
				return nil, errHelpShown
			}
			return nil, usageErrorf("%v", err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		if args[0] == "--" {
			return append(positional, args[1:]...), nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}
