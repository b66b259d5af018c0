package convention

import (
	"slices"
	"strconv"
	"testing"
)

// pairsByLists is the pairing rule as it was written, with a pointer and a list of kinds per
// done: the reference FuzzPairs holds pairs, which counts the kinds, to.
func (l *linter) pairsByLists() {
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

var pairsSeeds = []string{
	"v1 report x to lead n=2\ndone#1 a\nev#1 run r-1\n",
	"v1 report x to lead n=5\nev#2 run early\ndone#1 tests pass\ndone#2 b\nev run u\nev#1 commit 3f9a2c1\n",
	"v1 report x to lead n=4\ndone#1 a\ndone#1 again\nev#1 run r\nev#9 run none\n",
	"v1 report x to lead n=3\nev run orphan\ndone plain\nev see the logs\n",
	"v1 report x to lead n=4\nev#1 commit 3f9a2c1\nev#1 run r\ndone#1 the tests pass\ndone#1 x\n",
	"v1 report x to lead n=3\ndone the tests pass\nev commit 3f9a2c1\nev commit 4f9a2c1\n",
	"v1 report x to lead n=3\ndone the tests pass\nev commit 3f9a2c1\nev run r-1\n",
	// Past eight dones, where they are found by a map rather than a look back: keys used
	// twice on either side of the ninth, evidence above its done, unnumbered ones between.
	"v1 report x to lead n=16\nev#3 run early\ndone#1 a\ndone#2 b\ndone#3 c\ndone d\ndone#5 e\ndone#6 f\ndone#2 g\ndone#8 h\ndone#9 i\n" +
		"ev#2 run r\ndone#1 j\nev#1 commit 3f9a2c1\nev#12 run late\ndone#12 the tests pass\nev run u\n",
	"v1 report x to lead n=12\ndone#1 a\ndone#2 b\ndone#3 c\ndone#4 d\ndone#5 e\ndone#6 f\ndone#7 g\ndone#8 h\ndone#1 i\nev#1 run r\nev#8 run s\nev#9 run t\n",
}

func checkPairsRule(t *testing.T, src string) {
	t.Helper()
	m, _ := Parse(src)
	a, b := &linter{m: m, counter: roughCounter{}}, &linter{m: m, counter: roughCounter{}}
	a.pairs()
	b.pairsByLists()
	if !slices.Equal(a.diags, b.diags) {
		t.Errorf("pairs(%q) = %v, the list version gives %v", src, a.diags, b.diags)
	}
}

func TestPairsRule(t *testing.T) {
	for _, s := range pairsSeeds {
		checkPairsRule(t, s)
	}
	// Hand-worked: a done about tests proven by a commit only is a claim; one with a run is not.
	l := &linter{counter: roughCounter{}}
	l.m, _ = Parse(pairsSeeds[5])
	l.pairs()
	if len(l.diags) != 1 || l.diags[0].Code != "test-evidence" || l.diags[0].Line != 2 {
		t.Errorf("diagnostics %v, want one test-evidence on line 2", l.diags)
	}
}

func FuzzPairs(f *testing.F) {
	for _, s := range pairsSeeds {
		f.Add(s)
	}
	f.Fuzz(checkPairsRule)
}
