package room

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/parleyhq/parley/convention"
)

// pairEvidenceByMap is pairEvidence as it was written, with a map of dones by key and a
// pointer per pair: the reference FuzzPairEvidence holds it to.
func pairEvidenceByMap(m *convention.Message) []*evidencePair {
	var pairs []*evidencePair
	byKey := map[string]*evidencePair{}
	var last *evidencePair
	for _, l := range m.Lines {
		switch l.Word {
		case "done":
			p := &evidencePair{done: l}
			pairs = append(pairs, p)
			if l.Key != "" {
				byKey[l.Key] = p
			}
			last = p
		case "ev":
			switch {
			case l.Key != "" && byKey[l.Key] != nil:
				byKey[l.Key].evs = append(byKey[l.Key].evs, l)
			case l.Key == "" && last != nil:
				last.evs = append(last.evs, l)
			}
		}
	}
	return pairs
}

func checkPairs(t *testing.T, body string) {
	t.Helper()
	m, _ := convention.Parse(body)
	want := pairEvidenceByMap(m)
	for _, buf := range [][]evidencePair{nil, make([]evidencePair, 0, 2)} {
		got := pairEvidence(m, buf)
		same := len(got) == len(want)
		for i := 0; same && i < len(got); i++ {
			same = got[i].done == want[i].done && slices.Equal(got[i].evs, want[i].evs)
		}
		if !same {
			var ref []evidencePair
			for _, p := range want {
				ref = append(ref, *p)
			}
			t.Fatalf("pairEvidence(%q) = %+v, the map version gives %+v", body, got, ref)
		}
	}
}

var pairSeeds = []string{
	"v1 report x to lead n=2\ndone#1 a\nev#1 run r-1\n",
	"v1 report x to lead n=5\nev#2 run early\ndone#1 a\ndone#2 b\nev run u\nev#1 commit 3f9a2c1\n",
	"v1 report x to lead n=4\ndone#1 a\ndone#1 again\nev#1 run r\nev#9 run none\n",
	"v1 report x to lead n=2\nev run orphan\ndone plain\n",
	"v1 note x to lead n=1\nok\n",
}

// TestPairEvidence checks the hand-worked pairing of the seeds against the map version, and
// a message with more dones than the look back takes (the map's path).
func TestPairEvidence(t *testing.T) {
	for _, s := range pairSeeds {
		checkPairs(t, s)
	}
	var b strings.Builder
	b.WriteString("v1 report x to lead n=40\n")
	for i := range 20 {
		fmt.Fprintf(&b, "done#%d d%d\n", i%7, i)
		fmt.Fprintf(&b, "ev#%d run r%d\n", (i*3)%11, i)
	}
	checkPairs(t, b.String())
	// Hand-worked: ev#1 goes to the second done#1 (the nearest above), the unnumbered ev to
	// the last done, ev#9 to nobody.
	m, _ := convention.Parse(pairSeeds[2] + "ev run tail\n")
	got := pairEvidence(m, nil)
	if len(got) != 2 || len(got[0].evs) != 0 || len(got[1].evs) != 2 || got[1].evs[0].Text != "run r" || got[1].evs[1].Text != "run tail" {
		t.Errorf("pairs %+v", got)
	}
}

func FuzzPairEvidence(f *testing.F) {
	for _, s := range pairSeeds {
		f.Add(s)
	}
	f.Fuzz(checkPairs)
}

// TestAppendLabel holds the label evidenceNotes writes into its notes to label's, for numbered
// dones (keys short and past the stack buffer) and unnumbered ones on every kind of line number.
func TestAppendLabel(t *testing.T) {
	lines := []convention.Line{{Key: "1"}, {Key: "k2"}, {Key: strings.Repeat("x", 100)}, {Num: 0}, {Num: 2}, {Num: 9},
		{Num: 10}, {Num: 99}, {Num: 100}, {Num: 123456}}
	for n := range 300 {
		lines = append(lines, convention.Line{Num: n}, convention.Line{Key: fmt.Sprint(n), Num: n})
	}
	for _, l := range lines {
		var b [8]byte
		if got, want := string(appendLabel(b[:0], l)), label(l); got != want {
			t.Errorf("appendLabel(%+v) = %q, label gives %q", l, got, want)
		}
	}
}
