// Command parley is the one binary of parley: the room server, its CLI client, the message
// format tools, the tokenizers and the benchmarks. Each subcommand lives in its own file with
// its help text beside its code.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/parleyhq/parley/internal/spell"
)

// env is what a subcommand may touch of the outside world; tests build their own.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
}

// command is one subcommand: its name, a one-line summary for `parley help`, and its entry.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e *env, args []string) error
}

// commands is the table of subcommands, in the order `parley help` lists them.
func commands() []command {
	return []command{
		{"serve", "run the room server (HTTP API, MCP, web UI)", runServe},
		{"room", "create and list rooms, change a room's policy (admin)", runRoom},
		{"seat", "add, revoke or rotate a seat (admin)", runSeat},
		{"post", "post a message to a room", runPost},
		{"read", "read a room's history, optionally following it live", runRead},
		{"inbox", "show your unanswered asks and your own open asks", runInbox},
		{"search", "find a room's messages by their words", runSearch},
		{"state", "show the state record of a topic", runState},
		{"run", "post a test-run record (runner seats)", runRun},
		{"backup", "write a consistent copy of a SQLite database while the server runs", runBackup},
		{"export", "write a room's messages, asks, runs and seats as JSON lines (admin)", runExport},
		{"import", "create a room from an export, history byte for byte (admin)", runImport},
		{"mcp", "bridge an MCP client on stdio to a parley server", runMCP},
		{"tokens", "count tokens with o200k_base or cl100k_base", runTokens},
		{"convention", "print the room convention handed to every seat", runConvention},
		{"lint", "check messages against the convention or AACP", runLint},
		{"aacp", "validate, encode or decode AACP v1.1 packets", runAACP},
		{"a2c", "the lossless handoff codec: normalize, encode, decode, verify, benchmark, train, optimize, check", runA2C},
		{"bench", "measure formats and the server; reader tests and the prompt cache against a model", runBench},
		{"version", "print parley's version", runVersion},
	}
}

// exitError carries a process exit code other than 1 (2 for usage errors) or a silent 1
// (when the command has already printed what went wrong).
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// usageErrorf reports a usage mistake: exit code 2.
func usageErrorf(format string, args ...any) error {
	return &exitError{code: 2, msg: fmt.Sprintf(format, args...)}
}

// errSilentFailure exits 1 without printing more.
var errSilentFailure = &exitError{code: 1}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	e := &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	code := dispatch(ctx, e, os.Args[1:])
	stop()
	os.Exit(code)
}

// dispatch runs the subcommand named by args[0] and returns the process exit code.
func dispatch(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 {
		// No command is a usage mistake: the list goes to stderr and the exit code says so,
		// so a script that forgot its arguments does not pass.
		printUsage(e.stderr)
		return 2
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		if len(args) > 1 && args[0] == "help" {
			return dispatch(ctx, e, []string{args[1], "--help"})
		}
		printUsage(e.stdout)
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		args = []string{"version"}
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, e, args[1:])
		return exitCode(e, c.name, err)
	}
	fmt.Fprintf(e.stderr, "parley: unknown command %q\n", args[0])
	if s := suggest(args[0]); s != "" {
		fmt.Fprintf(e.stderr, "Did you mean %q?\n", s)
	}
	fmt.Fprintln(e.stderr, "Run 'parley help' for the list of commands.")
	return 2
}

func exitCode(e *env, name string, err error) int {
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintf(e.stderr, "parley %s: %s\n", name, ee.msg)
		}
		if ee.code == 2 {
			fmt.Fprintf(e.stderr, "Run 'parley %s --help' for usage.\n", name)
		}
		return ee.code
	}
	if errors.Is(err, errHelpShown) {
		return 0
	}
	fmt.Fprintf(e.stderr, "parley %s: %v\n", name, err)
	var ae *apiError
	if errors.As(err, &ae) {
		return apiExitCode(ae.Code)
	}
	return 1
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, `parley makes agents that work together cheaper to run and harder to misunderstand.

Usage:
  parley <command> [flags] [arguments]

Commands:
`)
	cs := commands()
	width := 0
	for _, c := range cs {
		width = max(width, len(c.name))
	}
	for _, c := range cs {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprint(w, `
Start here:
  parley serve                      # a room server on 127.0.0.1:7070, SQLite in ./parley.db
  parley tokens README.md           # count tokens (o200k_base)
  parley lint message.txt           # check a message before you post it

Run 'parley <command> --help' for a command's flags and examples.
`)
}

// suggest returns the command name closest to s, or "" when none is close.
func suggest(s string) string {
	best, bestD := "", 3
	names := []string{}
	for _, c := range commands() {
		names = append(names, c.name)
	}
	sort.Strings(names)
	for _, n := range names {
		if d := spell.Distance(strings.ToLower(s), n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}
