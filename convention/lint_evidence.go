// Evidence rules: every done has ev under it, ev names a kind a server can check, and
// tests are proven by runs.

package convention

import (
	"regexp"
	"strconv"
	"strings"
)

// pairs checks done/ev pairing: every done should have evidence, evidence should name a kind
// the server can check, and tests are proven by runs, not commits.
func (l *linter) pairs() {
	type done struct {
		line Line
		ev   evKinds
	}
	var few [4]done // the dones of most messages, on the stack
	dones := few[:0]
	// Made at their first entry (a message without a numbered done needs none of them); a nil
	// map reads as empty.
	var (
		byKey    map[string]int     // the index in dones of the nearest done#k above
		pending  map[string]evKinds // evidence of ev#k seen before their done#k
		lastDone map[string]int     // line of the last done#k, to spot an ev#k written above it
	)
	for _, ln := range l.m.Lines {
		if ln.Word == "done" && ln.Key != "" {
			if lastDone == nil {
				lastDone = map[string]int{}
			}
			lastDone[ln.Key] = ln.Num
		}
	}
	last := -1
	for _, ln := range l.m.Lines {
		switch ln.Word {
		case "done":
			dones = append(dones, done{line: ln})
			last = len(dones) - 1
			if ln.Key == "" {
				continue
			}
			if prev, dup := byKey[ln.Key]; dup {
				l.warn(ln.Num, ln.Col(), "duplicate-key", "done#"+ln.Key+" is used twice (first on line "+strconv.Itoa(dones[prev].line.Num)+"): evidence cannot say which one it proves", "")
			}
			if byKey == nil {
				byKey = map[string]int{}
			}
			byKey[ln.Key] = last // an ev#k below pairs with the nearest done#k above it
		case "ev":
			kind, _, _ := ParseEvidence(ln.Text)
			if kind == "" {
				l.evidenceKind(ln)
			}
			if ln.Key == "" {
				if last >= 0 {
					dones[last].ev.add(kind)
				}
				continue
			}
			if j, ok := byKey[ln.Key]; ok {
				dones[j].ev.add(kind)
			} else if lastDone[ln.Key] > ln.Num {
				l.warn(ln.Num, ln.Col(), "ev-order", "ev#"+ln.Key+" comes before done#"+ln.Key+": put evidence under the done it proves", "")
				if pending == nil {
					pending = map[string]evKinds{}
				}
				p := pending[ln.Key]
				p.add(kind)
				pending[ln.Key] = p
			}
		}
	}
	for k, p := range pending {
		if j, ok := byKey[k]; ok {
			dones[j].ev.merge(p)
		}
	}
	for _, d := range dones {
		ln := d.line
		head := ln.Head()
		if d.ev.n == 0 {
			l.warn(ln.Num, ln.Col(), "done-without-ev", head+" has no ev under it, so it is only a claim: add ev commit <sha> for code or ev run <id> for a test run, or write claim",
				ln.Raw[:ln.Col()-1]+"claim "+ln.Text)
			continue
		}
		// The kinds first: they are cheap, and most dones cite a run or no commit.
		if !d.ev.run && d.ev.commit && aboutTests(ln.Text) {
			l.warn(ln.Num, ln.Col(), "test-evidence", head+" is about tests but its evidence is a commit: a commit proves code exists; only a run reference (ev run <id>) proves a test ran, so this is a claim",
				ln.Raw[:ln.Col()-1]+"claim "+ln.Text)
		}
	}
}

// evKinds is what pairs needs of a done's evidence: how many ev lines it has, and whether
// one cites a run or a commit.
type evKinds struct {
	n           int
	run, commit bool
}

func (k *evKinds) add(kind string) {
	k.n++
	k.run = k.run || kind == EvidenceRun
	k.commit = k.commit || kind == EvidenceCommit
}

func (k *evKinds) merge(o evKinds) {
	k.n += o.n
	k.run = k.run || o.run
	k.commit = k.commit || o.commit
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
