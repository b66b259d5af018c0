package main

import (
	"bytes"
	"context"
	"flag"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/mock"
	"github.com/parleyhq/parley/internal/version"
)

// runMain runs parley in process with no environment and returns its exit code, stdout and
// stderr.
func runMain(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }}
	code := dispatch(t.Context(), e, args)
	return code, out.String(), errOut.String()
}

// TestNoCommandIsAUsageError: `parley` alone is a mistake (a script that lost its
// arguments), so it prints the usage to stderr and exits 2; `parley help` is a request, so
// it prints the same usage to stdout and exits 0.
func TestNoCommandIsAUsageError(t *testing.T) {
	code, out, errOut := runMain(t)
	if code != 2 || out != "" || !strings.Contains(errOut, "Commands:") || !strings.Contains(errOut, "  serve ") {
		t.Errorf("parley: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, help, errOut := runMain(t, "help")
	if code != 0 || errOut != "" || help == "" {
		t.Errorf("parley help: exit %d, stderr %q", code, errOut)
	}
	if _, _, bare := runMain(t); bare != help {
		t.Errorf("parley alone and parley help print different usage:\n%s\n---\n%s", bare, help)
	}
}

// a2cSubcommands is every subcommand runA2C dispatches; TestHelpListsEveryA2CSubcommand
// checks each of them exists, so a new one must be added here and to the help.
var a2cSubcommands = []string{"normalize", "encode", "decode", "verify", "benchmark", "train", "optimize", "check"}

func TestHelpListsEveryA2CSubcommand(t *testing.T) {
	_, help, _ := runMain(t, "help")
	var line string
	for l := range strings.Lines(help) {
		if strings.HasPrefix(l, "  a2c ") {
			line = l
		}
	}
	_, a2cHelp, _ := runMain(t, "a2c", "--help")
	for _, sub := range a2cSubcommands {
		if code, _, errOut := runMain(t, "a2c", sub, "--help"); code != 0 {
			t.Errorf("a2c %s --help: exit %d, %s", sub, code, errOut)
		}
		if !regexp.MustCompile(`\b` + sub + `\b`).MatchString(line) {
			t.Errorf("parley help's a2c line does not name %s: %q", sub, line)
		}
		if !strings.Contains(a2cHelp, "\n  "+sub+" ") {
			t.Errorf("parley a2c --help does not list %s", sub)
		}
	}
	if code, _, errOut := runMain(t, "a2c", "nosuch"); code != 2 || !strings.Contains(errOut, strings.Join(a2cSubcommands, ", ")) {
		t.Errorf("a2c nosuch: exit %d, %q", code, errOut)
	}
}

// groups are the commands whose first argument is a subcommand with its own flags.
var groups = map[string]bool{"a2c": true, "aacp": true, "bench": true}

// everyHelp is every invocation that has its own --help.
func everyHelp() [][]string {
	var all [][]string
	for _, c := range commands() {
		all = append(all, []string{c.name})
	}
	for _, sub := range a2cSubcommands {
		all = append(all, []string{"a2c", sub})
	}
	for _, sub := range []string{"validate", "encode", "decode", "quote"} {
		all = append(all, []string{"aacp", sub})
	}
	return append(all, []string{"bench", "formats"}, []string{"bench", "server"}, []string{"bench", "readers"}, []string{"bench", "cache"})
}

// TestHelpNamesFlagsWithTwoDashes: every --help lists its flags as the docs spell them,
// --name, and shows no sentinel default such as -1.
func TestHelpNamesFlagsWithTwoDashes(t *testing.T) {
	withFlags := 0
	for _, args := range everyHelp() {
		code, out, errOut := runMain(t, append(args, "--help")...)
		if code != 0 || errOut != "" {
			t.Errorf("%s --help: exit %d, stderr %q", strings.Join(args, " "), code, errOut)
			continue
		}
		_, flags, found := strings.Cut(out, "\nFlags:\n")
		if !found {
			continue
		}
		withFlags++
		flags, _, _ = strings.Cut(flags, "\nExamples:\n")
		for l := range strings.Lines(flags) {
			if strings.HasPrefix(l, "  -") && !strings.HasPrefix(l, "  --") {
				t.Errorf("%s --help lists a flag with one dash: %q", strings.Join(args, " "), l)
			}
			if strings.Contains(l, "(default -1)") {
				t.Errorf("%s --help shows a sentinel default: %q", strings.Join(args, " "), l)
			}
		}
	}
	if withFlags < 10 {
		t.Errorf("only %d --help outputs list flags; the check looked at the wrong text", withFlags)
	}
}

// TestPrintFlagsMatchesTheFlagPackage: the listing is PrintDefaults' own, every line and
// default the same, with one more dash before each name.
func TestPrintFlagsMatchesTheFlagPackage(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Bool("json", false, "print JSON")
	fs.Bool("v", false, "verbose")
	fs.Bool("color", true, "colour the output")
	fs.String("url", "", "server URL (default $PARLEY_URL)")
	fs.String("encoding", "o200k_base", "the `NAME` of the encoding")
	fs.Int("n", 0, "how many")
	fs.Int("readers", 8, "concurrent readers")
	fs.Int("after", -1, "a sentinel")
	fs.Duration("wait", 0, "how long to wait")
	fs.Duration("timeout", 30*time.Second, "give up after this long,\nwhatever happens")
	fs.Float64("ratio", 0.5, "a ratio")
	fs.Var(&countFlag{}, "failed", "`N` tests failed")

	var want, got bytes.Buffer
	fs.SetOutput(&want)
	fs.PrintDefaults()
	printFlags(&got, fs)
	wantText := regexp.MustCompile(`(?m)^  -`).ReplaceAllString(want.String(), "  --")
	if got.String() != wantText {
		t.Errorf("printFlags:\n%s\nwant:\n%s", got.String(), wantText)
	}
	for _, s := range []string{"  --v\tverbose\n", "  --encoding NAME\n", `(default "o200k_base")`, "(default 30s)", "(default -1)", "  --failed N\n    \tN tests failed\n"} {
		if !strings.Contains(got.String(), s) {
			t.Errorf("printFlags lacks %q:\n%s", s, got.String())
		}
	}
}

// TestFlagErrorsNameFlagsWithTwoDashes: the flag package's own errors say -afer; parley's
// say --afer, the way the docs and the help spell it, in every subcommand.
func TestFlagErrorsNameFlagsWithTwoDashes(t *testing.T) {
	for _, args := range everyHelp() {
		if groups[args[0]] && len(args) == 1 {
			continue // `parley a2c --afer` is an unknown subcommand
		}
		code, _, errOut := runMain(t, append(args, "--afer", "1")...)
		if code != 2 || !strings.Contains(errOut, "flag provided but not defined: --afer\n") {
			t.Errorf("%s --afer: exit %d, stderr %q", strings.Join(args, " "), code, errOut)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"read", "team", "-afer", "3"}, "parley read: flag provided but not defined: --afer\n"},
		{[]string{"read", "team", "--after"}, "parley read: flag needs an argument: --after\n"},
		{[]string{"read", "team", "--after", "x"}, `parley read: invalid value "x" for flag --after: parse error` + "\n"},
		{[]string{"read", "team", "--follow=maybe"}, `parley read: invalid boolean value "maybe" for --follow: parse error` + "\n"},
		// A value that looks like the message's own wording does not fool the rewrite.
		{[]string{"read", "team", "--after", "1 for flag -x: y"}, `parley read: invalid value "1 for flag -x: y" for flag --after: parse error` + "\n"},
		{[]string{"run", "post", "team", "--passed", "2", "--failed", "-1"}, `parley run: invalid value "-1" for flag --failed: a count cannot be negative` + "\n"},
	} {
		code, _, errOut := runMain(t, c.args...)
		if code != 2 || !strings.HasPrefix(errOut, c.want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", strings.Join(c.args, " "), code, errOut, c.want)
		}
	}
}

// TestRunCounts: --passed and --failed have no default in the help, say where the counts
// come from when they are absent, and still post what they are given (0 included).
func TestRunCounts(t *testing.T) {
	_, help, _ := runMain(t, "run", "--help")
	if !strings.Contains(help, "  --failed N\n") || !strings.Contains(help, "  --passed N\n") ||
		!strings.Contains(help, "when absent, the counts are read from the report FILE") || strings.Contains(help, "default -1") {
		t.Errorf("run --help:\n%s", help)
	}
	var posted string
	svc := &mock.RoomService{}
	svc.PostRunFn = func(ctx context.Context, c *parley.Caller, room, contentType string, body []byte, id string) (*parley.Run, error) {
		posted = string(body)
		return &parley.Run{ID: "ci-9", Passed: 12}, nil
	}
	url := fakeRoomServer(t, svc)
	code, out, errOut := runClient(t, url, "", "run", "post", "team", "--id", "ci-9", "--passed", "12", "--failed", "0")
	if code != 0 || posted != `{"commit":"","failed":0,"id":"ci-9","passed":12}` || out != "run ci-9: 12 passed, 0 failed\ncite it as evidence: ev run ci-9\n" {
		t.Errorf("run post: exit %d, posted %s, stdout %q, stderr %q", code, posted, out, errOut)
	}
	if code, _, errOut := runClient(t, url, "", "run", "post", "team", "--id", "ci-9", "--failed", "0"); code != 2 || !strings.Contains(errOut, "give both --passed and --failed") {
		t.Errorf("--failed alone: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runClient(t, url, "", "run", "post", "team", "--id", "ci-9"); code != 2 || !strings.Contains(errOut, "give --passed N --failed N, or a report FILE") {
		t.Errorf("no counts, no file: exit %d, %q", code, errOut)
	}
}

// TestRunnerSeatIsToldAboutRunPost: adding a runner seat says how it posts runs; adding an
// agent does not clutter its output with it.
func TestRunnerSeatIsToldAboutRunPost(t *testing.T) {
	svc := &mock.RoomService{}
	svc.AddSeatFn = func(ctx context.Context, c *parley.Caller, room, name string, role parley.Role) (*parley.Seat, string, error) {
		return &parley.Seat{Room: room, Name: name, Role: role}, "pk_secret", nil
	}
	url := fakeRoomServer(t, svc)
	code, out, errOut := runClient(t, url, "", "seat", "add", "team", "ci", "--role", "runner")
	if code != 0 || !strings.Contains(out, "token: pk_secret") || !strings.Contains(out, "  go test -json ./... | parley run post team --id ci-1 -\n") ||
		!strings.Contains(out, "  parley run post team --id ci-1 --passed 12 --failed 0\n") {
		t.Errorf("seat add runner: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	code, out, _ = runClient(t, url, "", "seat", "add", "team", "lead")
	if code != 0 || !strings.Contains(out, "parley post team message.txt") || strings.Contains(out, "run post") {
		t.Errorf("seat add agent: exit %d\n%s", code, out)
	}
}

// TestVersionIsOneString: `parley version` prints the one version string, and that string is
// what a checkout build reports (a release sets it with -ldflags; TestReleaseVersion).
func TestVersionIsOneString(t *testing.T) {
	_, out, _ := runMain(t, "version")
	if !strings.HasPrefix(out, "parley "+version.String()+" (go") {
		t.Errorf("parley version = %q, version.String() = %q", out, version.String())
	}
	if version.String() == "dev" || !strings.HasPrefix(version.String(), "v") {
		t.Errorf("version.String() = %q", version.String())
	}
}
