// Evidence rules: every done has ev under it, ev names a kind a server can check, and
// tests are proven by runs.

package convention

import (
	"strconv"
	"strings"

	"github.com/parleyhq/parley/internal/lazyre"
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
	// The dones by key, each the nearest done#k above: found by a look back over dones for
	// the few of most messages, in byKey (made past eight) for many.
	var byKey map[string]int
	find := func(key string) (int, bool) {
		if byKey != nil {
			j, ok := byKey[key]
			return j, ok
		}
		for j := len(dones) - 1; j >= 0; j-- {
			if dones[j].line.Key == key {
				return j, true
			}
		}
		return 0, false
	}
	var (
		pending  map[string]evKinds // evidence of ev#k seen before their done#k
		lastDone map[string]int     // line of the last done#k, to spot an ev#k written above it (made when first asked)
	)
	last := -1
	for _, ln := range l.m.Lines {
		switch ln.Word {
		case "done":
			prev, dup := 0, false // the nearest done#k above, looked up before this one joins
			if ln.Key != "" {
				prev, dup = find(ln.Key)
			}
			dones = append(dones, done{line: ln})
			last = len(dones) - 1
			if byKey == nil && len(dones) > 8 {
				byKey = make(map[string]int, 2*len(dones))
				for j, d := range dones[:last] {
					if d.line.Key != "" {
						byKey[d.line.Key] = j
					}
				}
			}
			if ln.Key == "" {
				continue
			}
			if dup {
				l.warn(ln.Num, ln.Col(), "duplicate-key", "done#"+ln.Key+" is used twice (first on line "+strconv.Itoa(dones[prev].line.Num)+"): evidence cannot say which one it proves", "")
			}
			if byKey != nil {
				byKey[ln.Key] = last // an ev#k below pairs with the nearest done#k above it
			}
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
			if j, ok := find(ln.Key); ok {
				dones[j].ev.add(kind)
				continue
			}
			if lastDone == nil {
				lastDone = map[string]int{}
				for _, ln := range l.m.Lines {
					if ln.Word == "done" && ln.Key != "" {
						lastDone[ln.Key] = ln.Num
					}
				}
			}
			if lastDone[ln.Key] > ln.Num {
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
		if j, ok := find(k); ok { // the last done#k of the message
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
	testsRe   = lazyre.New(`(?i)\b(tests?|tested|testing|specs?|suites?|passing|passes|passed|green|ci|e2e|coverage|vitest|jest|pytest|go test)\b`)
	bareShaRe = lazyre.New(`^(?:(?:sha|hash|commit:|#)\s*)?([0-9a-fA-F]{7,40})\b(.*)$`)
)

// aboutTests reports whether testsRe matches s, put to the expression only when s holds one
// of testStems in any case (FuzzAboutTests): most done lines do not, and the test costs a
// small part of what the expression does.
func aboutTests(s string) bool { return foldedStemsIn(s, testStemIndex) && testsRe.MatchString(s) }

// testStems are held by every word of testsRe: vitest, pytest and go test hold test; passing,
// passes and passed hold pass.
var testStemIndex = newStemIndex([]string{"test", "spec", "suite", "pass", "green", "ci", "e2e", "coverage", "jest"})

// evidenceKind explains an ev line whose evidence no server can check.
func (l *linter) evidenceKind(ln Line) {
	fix := ""
	if m := bareShaRe.FindStringSubmatch(ln.Text); m != nil && IsHexSHA(m[1]) && strings.ContainsAny(m[1], "0123456789") {
		fix = ln.Raw[:ln.Col()-1] + ln.Head() + " commit " + strings.ToLower(m[1]) + m[2]
	}
	l.warn(ln.Num, ln.TextCol(), "ev-kind", "this evidence names no kind a server can check: write commit <sha> [on <branch>] (code exists) or run <id> (a test ran)", fix)
}
