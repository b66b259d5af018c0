// Package evidence resolves the references that `ev` lines cite, so that the room server, not
// the reader, decides whether a `done` is proven.
//
// Two kinds can be checked: `commit <sha> [on [branch] <name>]` against a configured git
// repository, and `run <id>` against the test-run records that runner seats post. Anything else
// is unverified and stays a claim. A check never fails a post: every problem (no repository, a
// malformed sha, git missing or slow) becomes an unverified verdict with a reason, which the
// server freezes into the message's notes.
//
// The git resolver runs `git` directly (exec, no shell) with every argument passed separately,
// validates the sha as hex and the branch against a conservative pattern before it gets near a
// command line, and bounds each call with a timeout.
package evidence

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/casefold"
	"github.com/parleyhq/parley/internal/lazyre"
)

// Verdict statuses.
const (
	Verified   = "verified"   // the reference resolved and proves what it names
	Unverified = "unverified" // it could not be resolved or checked: the done stays a claim
	Failed     = "failed"     // it resolved and disproves the done (a run with failures)
)

// Kinds of reference.
const (
	KindCommit = "commit"
	KindRun    = "run"
)

// Ref is a parsed evidence reference. Kind is "" when the text names no checkable kind.
type Ref struct {
	Kind   string // KindCommit, KindRun or ""
	ID     string // the sha (lower-cased) or the run id, as written otherwise
	Branch string // for a commit: the branch named after `on`, if any
}

// String writes the reference back in its canonical short form.
func (r Ref) String() string {
	switch {
	case r.Kind == KindCommit && r.Branch != "":
		return "commit " + r.ID + " on " + r.Branch
	case r.Kind != "":
		return r.Kind + " " + r.ID
	}
	return r.ID
}

// Parse reads an ev line's text: `commit <sha> [on [branch] <name>]` or `run <id>`, with any
// further words ignored. It does not validate the sha or branch (Resolve does, so that it can
// say what is wrong); Kind is "" for anything else. The words are those of strings.Fields,
// read one at a time without a slice of them (every post with an ev line parses it, and
// FuzzParseRef holds it to the strings.Fields version).
func Parse(text string) Ref {
	kind, rest := nextField(text)
	first, rest := nextField(rest)
	if first == "" {
		return Ref{ID: strings.TrimSpace(text)}
	}
	id := strings.TrimRight(first, ",;.")
	switch {
	case lowerIs(kind, KindCommit):
		r := Ref{Kind: KindCommit, ID: strings.ToLower(id)}
		on, rest := nextField(rest)
		name, rest := nextField(rest)
		if name != "" && on == "on" {
			if name == "branch" {
				if after, _ := nextField(rest); after != "" {
					name = after
				}
			}
			r.Branch = strings.TrimRight(name, ",;")
		}
		return r
	case lowerIs(kind, KindRun):
		return Ref{Kind: KindRun, ID: id}
	}
	return Ref{ID: strings.TrimSpace(text)}
}

// nextField returns the first of strings.Fields(s) ("" when there is none) and what follows
// it.
func nextField(s string) (field, rest string) {
	start := -1
	for i := 0; i < len(s); {
		c, size := rune(s[i]), 1
		if c >= utf8.RuneSelf {
			c, size = utf8.DecodeRuneInString(s[i:])
		}
		switch space := unicode.IsSpace(c); {
		case space && start >= 0:
			return s[start:i], s[i:]
		case !space && start < 0:
			start = i
		}
		i += size
	}
	if start < 0 {
		return "", ""
	}
	return s[start:], ""
}

// lowerIs reports whether strings.ToLower(s) == word, for a lower-case ASCII word, without
// the lowered copy when s is ASCII.
func lowerIs(s, word string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return strings.ToLower(s) == word
		}
	}
	if len(s) != len(word) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != word[i] {
			return false
		}
	}
	return true
}

// Verdict is the outcome of resolving one reference.
type Verdict struct {
	Status string // Verified, Unverified or Failed
	Ref    Ref
	Detail string // for Verified: what was checked; otherwise why it is not proof
}

// String is the verdict as the server freezes it into notes and state records:
// "verified: commit 3f9a2c1 on feat/rate-limit", "unverified: commit 3f9a2c1 not found in the
// repository", "failed: run ci-42 has 2 failures".
func (v Verdict) String() string {
	if v.Detail == "" {
		return v.Status
	}
	return v.Status + ": " + v.Detail
}

// OK reports whether the verdict proves the reference.
func (v Verdict) OK() bool { return v.Status == Verified }

// RunSource looks up test-run records; parley.Store satisfies it.
type RunSource interface {
	Run(ctx context.Context, room, id string) (*parley.Run, error)
}

// DefaultTimeout bounds one git invocation.
const DefaultTimeout = 5 * time.Second

// Resolver checks references. The zero value checks nothing and calls every reference
// unverified, with the reason.
type Resolver struct {
	GitRepo string        // repository for commit checks; "" = commits stay unverified
	Git     string        // the git binary; "" = "git" from PATH
	Timeout time.Duration // per git call; 0 = DefaultTimeout
	Runs    RunSource     // run records; nil = runs stay unverified
	Logger  *slog.Logger  // nil = slog.Default()
}

// The shapes below are checked by hand rather than with regexp: `{0,199}` compiles into 199
// copies of its class, which cost every parley command ~5 ms and 4,700 allocations at start
// (TestShapesMatchTheirPatterns keeps them equal to the patterns they replace).

// isHex reports whether s is made of lowercase hex digits only (true for "").
func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// isName reports whether s is 1 to max bytes: an ASCII letter, digit or '_', then letters,
// digits, '_' or bytes of more. branchName is narrower than git's own rules on purpose: a
// name that passes it can never be read as an option, a revision range or a reflog expression.
func isName(s string, max int, more string) bool {
	if len(s) == 0 || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' {
			continue
		}
		if i == 0 || strings.IndexByte(more, c) < 0 {
			return false
		}
	}
	return true
}

func shaShape(s string) bool   { return len(s) >= 4 && len(s) <= 64 && isHex(s) }
func branchName(s string) bool { return isName(s, 200, "./+-") }
func runIDShape(s string) bool { return isName(s, 128, ".:/-") }

// MinSHA is the fewest hex digits a commit sha needs to be checked. git accepts 4, but four
// or five digits name one of only 65,536 or a million prefixes: in a repository of some size
// almost any such string names a commit, so it would "verify" nearly anything. Seven is git's
// own default abbreviation.
const MinSHA = 7

// ValidSHA reports whether s is a lower-case hex object name of MinSHA to 64 digits (SHA-1
// names have 40, SHA-256 names 64).
func ValidSHA(s string) bool { return len(s) >= MinSHA && shaShape(s) }

// ValidBranch reports whether name is safe to hand to git as a branch: it starts with a letter,
// digit or underscore (never '-'), and contains no "..", "@{", "//", no trailing '/' or '.lock'.
func ValidBranch(name string) bool {
	return branchName(name) &&
		!strings.Contains(name, "..") && !strings.Contains(name, "@{") &&
		!strings.Contains(name, "//") && !strings.HasSuffix(name, "/") &&
		!strings.HasSuffix(name, ".lock") && !strings.HasSuffix(name, ".")
}

// ValidRunID reports whether id is acceptable as a run id.
func ValidRunID(id string) bool { return runIDShape(id) }

// Resolve parses text as an ev line's reference and checks it.
func (r *Resolver) Resolve(ctx context.Context, room, text string) Verdict {
	return r.ResolveBefore(ctx, time.Time{}, room, text)
}

// ResolveBefore is Resolve with a deadline (none when zero) for the git a commit check runs,
// on top of the resolver's Timeout: the checks of one post share one. A run is looked up in
// the store under ctx alone, so that the common check makes no timer.
func (r *Resolver) ResolveBefore(ctx context.Context, deadline time.Time, room, text string) Verdict {
	ref := Parse(text)
	switch ref.Kind {
	case KindCommit:
		return r.commit(ctx, deadline, ref.ID, ref.Branch)
	case KindRun:
		return r.Run(ctx, room, ref.ID)
	}
	return Verdict{Status: Unverified, Ref: ref,
		Detail: fmt.Sprintf("%q is neither `commit <sha>` nor `run <id>`", shorten(ref.ID, 40))}
}

// Commit checks that sha names a commit in the repository and, when branch is not "", that
// the commit is reachable from it.
func (r *Resolver) Commit(ctx context.Context, sha, branch string) Verdict {
	return r.commit(ctx, time.Time{}, sha, branch)
}

// commit is Commit with a deadline for its git commands (none when zero).
func (r *Resolver) commit(ctx context.Context, deadline time.Time, sha, branch string) Verdict {
	ref := Ref{Kind: KindCommit, ID: sha, Branch: branch}
	v := Verdict{Status: Unverified, Ref: ref}
	switch {
	case len(sha) < MinSHA && sha != "" && isHex(sha):
		v.Detail = fmt.Sprintf("commit %s is too short to check: give at least %d hex digits of the sha", sha, MinSHA)
		return v
	case !ValidSHA(sha):
		v.Detail = fmt.Sprintf("commit %q is not a hex sha (%d to 64 digits 0-9a-f)", shorten(sha, 70), MinSHA)
		return v
	case branch != "" && !ValidBranch(branch):
		v.Detail = fmt.Sprintf("branch %q is not a plain branch name", shorten(branch, 70))
		return v
	case r.GitRepo == "":
		v.Detail = fmt.Sprintf("commit %s not checked: the server has no repository configured", sha)
		return v
	}

	code, err := r.git(ctx, deadline, "cat-file", "-e", sha+"^{commit}")
	if err != nil {
		v.Detail = fmt.Sprintf("commit %s not checked: %v", sha, err)
		return v
	}
	if code != 0 {
		v.Detail = fmt.Sprintf("commit %s not found in the repository", sha)
		return v
	}
	if branch == "" {
		return Verdict{Status: Verified, Ref: ref, Detail: "commit " + sha}
	}
	code, err = r.git(ctx, deadline, "merge-base", "--is-ancestor", sha, branch)
	switch {
	case err != nil:
		v.Detail = fmt.Sprintf("commit %s on %s not checked: %v", sha, branch, err)
	case code == 0:
		return Verdict{Status: Verified, Ref: ref, Detail: "commit " + sha + " on " + branch}
	case code == 1:
		v.Detail = fmt.Sprintf("commit %s is not on %s", sha, branch)
	default:
		v.Detail = fmt.Sprintf("branch %s not found in the repository", branch)
	}
	return v
}

// errGit is what a user sees when git could not be run; the detail goes to the log.
var errGit = errors.New("git failed on the server")

// git runs one git command in the repository and returns its exit code. An error means the
// command could not run or timed out (the resolver's Timeout, or deadline when it is set and
// comes first); a non-zero exit code is an answer, not an error.
func (r *Resolver) git(ctx context.Context, deadline time.Time, args ...string) (int, error) {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	end := time.Now().Add(timeout)
	if !deadline.IsZero() && deadline.Before(end) {
		end = deadline
	}
	ctx, cancel := context.WithDeadline(ctx, end)
	defer cancel()
	bin := r.Git
	if bin == "" {
		bin = "git"
	}
	cmd := exec.CommandContext(ctx, bin, append([]string{"-C", r.GitRepo}, args...)...)
	// No prompts, no pager, no lock files taken in a repository that someone else is using.
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "GIT_PAGER=cat")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		r.logger().Warn("evidence: git timed out", "args", args, "timeout", timeout)
		return -1, fmt.Errorf("git took longer than %s", timeout)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if exit.ExitCode() > 1 {
			// 128 is git's "fatal": unknown revision, not a repository, dubious ownership.
			// The user sees "not found"; the operator needs the reason.
			r.logger().Debug("evidence: git refused", "args", args, "code", exit.ExitCode(),
				"stderr", strings.TrimSpace(stderr.String()))
		}
		return exit.ExitCode(), nil
	}
	if err != nil {
		r.logger().Error("evidence: cannot run git", "bin", bin, "err", err)
		return -1, errGit
	}
	return 0, nil
}

// Run checks a run record: verified when it exists, ran at least one test and had no failures.
func (r *Resolver) Run(ctx context.Context, room, id string) Verdict {
	ref := Ref{Kind: KindRun, ID: id}
	v := Verdict{Status: Unverified, Ref: ref}
	switch {
	case !ValidRunID(id):
		v.Detail = fmt.Sprintf("run id %q is not a plain id", shorten(id, 70))
		return v
	case r.Runs == nil:
		v.Detail = fmt.Sprintf("run %s not checked: the server keeps no run records", id)
		return v
	}
	run, err := r.Runs.Run(ctx, room, id)
	if parley.ErrorCode(err) == parley.ENOTFOUND {
		v.Detail = "run " + id + " not found; a runner seat must post it first" // every post citing a run not yet posted
		return v
	}
	if err != nil {
		r.logger().Error("evidence: run lookup", "room", room, "run", id, "err", err)
		v.Detail = fmt.Sprintf("run %s not checked: internal error", id)
		return v
	}
	switch {
	case run.Failed > 0:
		return Verdict{Status: Failed, Ref: ref, Detail: fmt.Sprintf("run %s has %d %s", id, run.Failed, plural(run.Failed, "failure"))}
	case run.Passed == 0:
		v.Detail = fmt.Sprintf("run %s ran no tests", id)
		return v
	}
	return Verdict{Status: Verified, Ref: ref, Detail: fmt.Sprintf("run %s, %d passed", id, run.Passed)}
}

func (r *Resolver) logger() *slog.Logger {
	if r.Logger != nil {
		return r.Logger
	}
	return slog.Default()
}

// testWords are the words that make a done line a statement about tests.
var testWords = lazyre.New(`(?i)\b(tests?|testing|passing|passes|passed|cases|suite|specs?)\b`)

// AboutTests reports whether a done line's text is a statement about tests (it mentions test,
// tests, passing, cases, suite, spec …). Such a done needs a run as evidence: a commit proves
// that code exists, not that tests ran.
func AboutTests(text string) bool { return mentionsTestStem(text) && testWords.MatchString(text) }

// testStems are held by every word of testWords: testing holds test, passing pass.
var testStems = []string{"test", "pass", "case", "suite", "spec"}

// mentionsTestStem reports whether text, with its case folded as testWords' (?i) folds it
// (casefold), holds one of testStems: a test far cheaper than the
// expression, which most done lines then skip (FuzzAboutTests holds the two to the same
// answers).
func mentionsTestStem(text string) bool {
	var small [256]byte // the folded text of most lines, on the stack
	f := casefold.Append(small[:0], text)
	for _, st := range testStems {
		if bytes.Contains(f, []byte(st)) {
			return true
		}
	}
	return false
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// shorten keeps user text in a verdict short, so a note never grows with what was posted.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 { // do not split a UTF-8 sequence
		cut--
	}
	return s[:cut] + "…"
}
