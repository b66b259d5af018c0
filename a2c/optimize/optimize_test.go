package optimize

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parleyhq/parley/a2c"
	"github.com/parleyhq/parley/bpe"
	"github.com/parleyhq/parley/trace"
)

func release(t *testing.T, dir string, seed int64) (*Results, []trace.Session) {
	t.Helper()
	enc, err := bpe.Get("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	ss := trace.Synthetic(seed, 12)
	cfg := &Config{Adapter: "synthetic", Encoding: "cl100k_base", Seed: seed, MaxCycles: 10, Retest: []int64{11, 23},
		Version: "test", Counter: enc, Baselines: []a2c.Baseline{a2c.MinifiedJSON}}
	r, sel, err := Run(context.Background(), cfg, ss)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, r, sel, NewManifest(cfg, "", ss, testTime, 0)); err != nil {
		t.Fatal(err)
	}
	return r, ss
}

func TestRunWritesAConsistentReproducibleRelease(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	r, ss := release(t, a, 7)
	release(t, b, 7)
	for _, f := range []string{"results.json", "report.md", "protocol.json", "full-cost.svg", "break-even.svg"} {
		x, err1 := os.ReadFile(filepath.Join(a, f))
		y, err2 := os.ReadFile(filepath.Join(b, f))
		if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs with the same seed (%v %v)", f, err1, err2)
		}
	}
	if !r.Lossless || r.Saving <= 0 || len(r.Winner) == 0 {
		t.Fatalf("winner %v saving %v lossless %v", r.Winner, r.Saving, r.Lossless)
	}
	if r.Verdict != Verdict(r.Saving, r.MedianBreakEven) {
		t.Fatalf("verdict %q", r.Verdict)
	}
	bad, err := Check(a, ss)
	if err != nil || len(bad) != 0 {
		t.Fatalf("check: %v %v", bad, err)
	}
	checkWins(t, r, ss)
}

// checkWins recomputes, apart from Select, the held-back cost of every configuration the
// search moved through: the training sessions dealt alternately into two folds, each
// fold encoded with the configuration fitted on the other and measured with a2c.Measure.
// Each cycle's "won" probe must have the recorded cost and be strictly cheaper than the
// configuration before it, each enabled improvement must be new, and a cycle without a
// winner must hold no lossless probe cheaper than the current configuration.
func checkWins(t *testing.T, r *Results, ss []trace.Session) {
	t.Helper()
	enc, _ := bpe.Get("cl100k_base")
	byID := map[string]*trace.Session{}
	for i := range ss {
		byID[ss[i].ID] = &ss[i]
	}
	var folds [2][]a2c.Input
	for i, id := range r.Selection.TrainSessions {
		folds[i%2] = append(folds[i%2], a2c.Input{ID: id, Records: a2c.RecordValues(byID[id])})
	}
	heldBack := func(labels []string) int {
		total := 0
		for f := 0; f < 2; f++ {
			o := a2c.Options{Counter: enc}
			for _, l := range labels {
				im, ok := Lookup(l)
				if !ok {
					t.Fatalf("unknown improvement %q", l)
				}
				im.apply(&o, folds[1-f])
			}
			res, err := a2c.Measure(context.Background(), folds[f], o, enc, "cl100k_base", nil, nil)
			if err != nil || !res.Lossless {
				t.Fatalf("%v: %v lossless=%v", labels, err, res != nil && res.Lossless)
			}
			total += res.FullCostTokens
		}
		return total
	}
	var labels []string
	cur := heldBack(nil)
	if r.Selection.Probes[0].FullCostTokens != cur {
		t.Fatalf("baseline recorded %d, recomputed %d", r.Selection.Probes[0].FullCostTokens, cur)
	}
	wins := 0
	for cycle := 1; cycle <= r.Selection.Cycles; cycle++ {
		var won *Probe
		for i := range r.Selection.Probes {
			p := &r.Selection.Probes[i]
			if p.Cycle != cycle {
				continue
			}
			if p.Outcome == "won" {
				if won != nil {
					t.Fatalf("cycle %d has two winners", cycle)
				}
				won = p
			}
		}
		if won == nil {
			for _, p := range r.Selection.Probes {
				if p.Cycle == cycle && p.Lossless && p.FullCostTokens < cur {
					t.Errorf("cycle %d: no winner, but %s recorded %d < %d", cycle, p.Added, p.FullCostTokens, cur)
				}
			}
			continue
		}
		for _, l := range labels {
			if im, _ := Lookup(l); im.Name == strings.SplitN(won.Added, "(", 2)[0] {
				t.Errorf("cycle %d enabled %s again", cycle, won.Added)
			}
		}
		labels = append(labels, won.Added)
		got := heldBack(labels)
		if got != won.FullCostTokens {
			t.Errorf("cycle %d: %s recorded %d tokens, recomputed %d", cycle, won.Added, won.FullCostTokens, got)
		}
		if got >= cur {
			t.Errorf("cycle %d: %s won at %d tokens, not below the %d before it", cycle, won.Added, got, cur)
		}
		cur = got
		wins++
	}
	if wins == 0 || strings.Join(labels, ",") != strings.Join(r.Winner, ",") {
		t.Fatalf("winner %v, wins recomputed %v", r.Winner, labels)
	}
}

func TestCheckNamesAnAlteredNumber(t *testing.T) {
	dir := t.TempDir()
	_, ss := release(t, dir, 5)
	path := filepath.Join(dir, "results.json")
	data, _ := os.ReadFile(path)
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m["full_cost_tokens"] = m["full_cost_tokens"].(float64) + 1
	out, _ := json.MarshalIndent(m, "", "  ")
	os.WriteFile(path, out, 0o644)
	bad, err := Check(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) == 0 || !strings.Contains(strings.Join(bad, "\n"), "full_cost_tokens") {
		t.Fatalf("check did not name full_cost_tokens: %v", bad)
	}
	// A different corpus has a different fingerprint.
	bad, _ = Check(dir, trace.Synthetic(99, 3))
	if !strings.Contains(strings.Join(bad, "\n"), "corpus_fingerprint") {
		t.Fatalf("check did not name the fingerprint: %v", bad)
	}
	_ = ss
}

func TestCheckNamesAWrongVerdictAndReport(t *testing.T) {
	dir := t.TempDir()
	r, _ := release(t, dir, 3)
	path := filepath.Join(dir, "results.json")
	r.Verdict = map[string]string{"practical": "research-only", "research-only": "practical"}[r.Verdict]
	b, _ := json.MarshalIndent(r, "", "  ")
	os.WriteFile(path, b, 0o644)
	bad, _ := Check(dir, nil)
	joined := strings.Join(bad, "\n")
	if !strings.Contains(joined, "verdict") || !strings.Contains(joined, "report.md") {
		t.Fatalf("want the verdict and report.md named: %v", bad)
	}
}

func TestSplitIsByTrajectoryAndSeeded(t *testing.T) {
	in := a2c.Inputs(trace.Synthetic(1, 20))
	tr1, te1 := Split(in, 7)
	tr2, te2 := Split(in, 7)
	_, te3 := Split(in, 8)
	if len(tr1)+len(te1) != 20 || len(te1) != 6 {
		t.Fatalf("split %d/%d", len(tr1), len(te1))
	}
	ids := func(x []a2c.Input) string {
		var s []string
		for _, i := range x {
			s = append(s, i.ID)
		}
		return strings.Join(s, ",")
	}
	if ids(te1) != ids(te2) || ids(tr1) != ids(tr2) {
		t.Fatal("the same seed split differently")
	}
	if ids(te1) == ids(te3) {
		t.Fatal("different seeds gave the same test split")
	}
	seen := map[string]bool{}
	for _, x := range tr1 {
		seen[x.ID] = true
	}
	for _, x := range te1 {
		if seen[x.ID] {
			t.Fatalf("%s is in both splits", x.ID)
		}
	}
}

// TestRecountNamesACountThatIsNotWhatShips: a per-session payload count one token off
// what the re-encoded payload counts is named, though the sums were kept consistent.
func TestRecountNamesACountThatIsNotWhatShips(t *testing.T) {
	dir := t.TempDir()
	r, ss := release(t, dir, 5)
	if bad, err := Recount(r, ss); err != nil || len(bad) != 0 {
		t.Fatalf("a fresh release: %v %v", bad, err)
	}
	r.PerSession[0].PayloadTokens++
	r.PerSession[1].InstructionTokens--
	r.DictionaryTokens += 3
	bad, err := Recount(r, ss)
	joined := strings.Join(bad, "\n")
	if err != nil || len(bad) != 3 || !strings.Contains(joined, "payload as shipped") || !strings.Contains(joined, "instructions as shipped") || !strings.Contains(joined, "dictionary as shipped") {
		t.Fatalf("want the three altered counts named: %v %v", bad, err)
	}
}
