// Evidence rules: every done has ev under it, ev names a kind a server can check, and
// tests are proven by runs.

package convention

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// pairs checks done/ev pairing: every done should have evidence, evidence should name a kind
// the server can check, and tests are proven by runs, not commits.
func (l *linter) pairs() {
	type done struct {
		line  Line
		kinds []string
	}
	var dones []*done
	byKey := map[string]*done{}
	pending := map[string][]string{} // evidence kinds of ev#k seen before their done#k
	lastDone := map[string]int{}     // line of the last done#k, to spot an ev#k written above it
	for _, ln := range l.m.Lines {
		if ln.Word == "done" && ln.Key != "" {
			lastDone[ln.Key] = ln.Num
		}
	}
	var last *done
	for _, ln := range l.m.Lines {
		switch ln.Word {
		case "done":
			d := &done{line: ln}
			dones = append(dones, d)
			last = d
			if ln.Key == "" {
				continue
			}
			if prev, dup := byKey[ln.Key]; dup {
				l.warn(ln.Num, ln.Col(), "duplicate-key", "done#"+ln.Key+" is used twice (first on line "+strconv.Itoa(prev.line.Num)+"): evidence cannot say which one it proves", "")
			}
			byKey[ln.Key] = d // an ev#k below pairs with the nearest done#k above it
		case "ev":
			kind, _, _ := ParseEvidence(ln.Text)
			if kind == "" {
				l.evidenceKind(ln)
			}
			switch {
			case ln.Key == "":
				if last != nil {
					last.kinds = append(last.kinds, kind)
				}
			case byKey[ln.Key] != nil:
				byKey[ln.Key].kinds = append(byKey[ln.Key].kinds, kind)
			case lastDone[ln.Key] > ln.Num:
				l.warn(ln.Num, ln.Col(), "ev-order", "ev#"+ln.Key+" comes before done#"+ln.Key+": put evidence under the done it proves", "")
				pending[ln.Key] = append(pending[ln.Key], kind)
			}
		}
	}
	for k, kinds := range pending {
		if d := byKey[k]; d != nil {
			d.kinds = append(d.kinds, kinds...)
		}
	}
	for _, d := range dones {
		ln := d.line
		head := ln.Head()
		if len(d.kinds) == 0 {
			l.warn(ln.Num, ln.Col(), "done-without-ev", head+" has no ev under it, so it is only a claim: add ev commit <sha> for code or ev run <id> for a test run, or write claim",
				ln.Raw[:ln.Col()-1]+"claim "+ln.Text)
			continue
		}
		// The kinds first: they are cheap, and most dones cite a run or no commit.
		if !slices.Contains(d.kinds, EvidenceRun) && slices.Contains(d.kinds, EvidenceCommit) && aboutTests(ln.Text) {
			l.warn(ln.Num, ln.Col(), "test-evidence", head+" is about tests but its evidence is a commit: a commit proves code exists; only a run reference (ev run <id>) proves a test ran, so this is a claim",
				ln.Raw[:ln.Col()-1]+"claim "+ln.Text)
		}
	}
}

var (
	testsRe   = regexp.MustCompile(`(?i)\b(tests?|tested|testing|specs?|suites?|passing|passes|passed|green|ci|e2e|coverage|vitest|jest|pytest|go test)\b`)
	bareShaRe = regexp.MustCompile(`^(?:(?:sha|hash|commit:|#)\s*)?([0-9a-fA-F]{7,40})\b(.*)$`)
)

func aboutTests(s string) bool { return testsRe.MatchString(s) }

// evidenceKind explains an ev line whose evidence no server can check.
func (l *linter) evidenceKind(ln Line) {
	fix := ""
	if m := bareShaRe.FindStringSubmatch(ln.Text); m != nil && IsHexSHA(m[1]) && strings.ContainsAny(m[1], "0123456789") {
		fix = ln.Raw[:ln.Col()-1] + ln.Head() + " commit " + strings.ToLower(m[1]) + m[2]
	}
	l.warn(ln.Num, ln.TextCol(), "ev-kind", "this evidence names no kind a server can check: write commit <sha> [on <branch>] (code exists) or run <id> (a test ran)", fix)
}
