package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
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
			printFlags(w, fs)
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
			return nil, usageErrorf("%s", doubleDash(fs, err.Error()))
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

// printFlags lists fs's flags as the flag package's PrintDefaults does, but spelt the way
// the docs and the examples spell them: --name. A default is shown unless it is the zero
// value of the flag's type (so a flag whose "unset" is not a real value should use a Value
// type whose zero String() is its default, as countFlag does).
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		var b strings.Builder
		fmt.Fprintf(&b, "  --%s", f.Name)
		name, usage := flag.UnquoteUsage(f)
		if name != "" {
			b.WriteString(" " + name)
		}
		if name == "" && len(f.Name) == 1 {
			b.WriteString("\t") // a one-letter switch keeps its usage on its line
		} else {
			b.WriteString("\n    \t")
		}
		b.WriteString(strings.ReplaceAll(usage, "\n", "\n    \t"))
		if !zeroDefault(f) {
			if reflect.TypeOf(f.Value).String() == "*flag.stringValue" {
				fmt.Fprintf(&b, " (default %q)", f.DefValue)
			} else {
				fmt.Fprintf(&b, " (default %v)", f.DefValue)
			}
		}
		fmt.Fprintln(w, b.String())
	})
}

// zeroDefault reports whether f's default is the zero value of its type, as the flag
// package decides it: the String of a new value of the flag's type.
func zeroDefault(f *flag.Flag) (zero bool) {
	defer func() {
		if recover() != nil {
			zero = false
		}
	}()
	t := reflect.TypeOf(f.Value)
	var z reflect.Value
	if t.Kind() == reflect.Pointer {
		z = reflect.New(t.Elem())
	} else {
		z = reflect.Zero(t)
	}
	return f.DefValue == z.Interface().(flag.Value).String()
}

// doubleDash rewrites the flag package's error messages, which name flags with one dash
// ("flag provided but not defined: -afer"), to name them as the docs do: --afer.
func doubleDash(fs *flag.FlagSet, msg string) string {
	// Messages that start with the flag: the rest of the message is its name.
	for _, p := range []string{"flag provided but not defined: -", "flag needs an argument: -", "invalid boolean flag "} {
		if rest, ok := strings.CutPrefix(msg, p); ok {
			rest = strings.TrimPrefix(rest, "-")
			return strings.TrimSuffix(p, "-") + "--" + rest
		}
	}
	// Messages that quote the value first ("invalid value %q for flag -%s: %v"): find the
	// " for flag -NAME:" whose NAME is a flag of fs, after the quoted value.
	for _, p := range []string{" for flag -", " for -"} {
		if !strings.HasPrefix(msg, "invalid ") {
			break
		}
		for i := 0; ; {
			j := strings.Index(msg[i:], p)
			if j < 0 {
				break
			}
			at := i + j + len(p)
			name, _, found := strings.Cut(msg[at:], ":")
			if found && fs.Lookup(name) != nil {
				return msg[:at-1] + "--" + msg[at:]
			}
			i = at
		}
	}
	return msg
}
