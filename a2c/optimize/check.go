package optimize

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/parleyhq/parley/a2c"
	"github.com/parleyhq/parley/bpe"
	"github.com/parleyhq/parley/trace"
)

// Check re-derives a release folder's figures and returns every inconsistency it finds,
// each naming the field or file at fault: the arithmetic of results.json (full cost =
// its parts, savings, the per-session sums, the median break-even, the never count, the
// stability figures), the verdict against the thresholds, the figures report.md states,
// and, when sessions are given, the corpus fingerprint in the manifest and every token
// figure recounted from the shipped text (Recount).
func Check(dir string, sessions []trace.Session) ([]string, error) {
	var r Results
	data, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("results.json: %w", err)
	}
	var bad []string
	add := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9 }

	if r.FullCostTokens != r.PayloadTokens+r.InstructionTokens+r.DictionaryTokens {
		add("results.json: full_cost_tokens %d != payload_tokens %d + instruction_tokens %d + dictionary_tokens %d",
			r.FullCostTokens, r.PayloadTokens, r.InstructionTokens, r.DictionaryTokens)
	}
	if want := saving(r.FullCostTokens, r.RawTokens); !near(r.Saving, want) {
		add("results.json: saving %v != 1 - full_cost_tokens/raw_tokens = %v", r.Saving, want)
	}
	if want := saving(r.PayloadTokens, r.RawTokens); !near(r.PayloadOnlySaving, want) {
		add("results.json: payload_only_saving %v != 1 - payload_tokens/raw_tokens = %v", r.PayloadOnlySaving, want)
	}
	var raw, pay, ins, handoffs, never int
	for _, s := range r.PerSession {
		raw += s.RawTokens
		pay += s.PayloadTokens
		ins += s.InstructionTokens
		handoffs += s.Handoffs
		if s.BreakEven == 0 {
			never++
		}
		if s.BreakEven < 0 || s.BreakEven > s.Handoffs {
			add("results.json: per_session %s: break_even %d outside 0..%d", s.ID, s.BreakEven, s.Handoffs)
		}
	}
	if raw != r.RawTokens {
		add("results.json: raw_tokens %d != sum of per_session raw_tokens %d", r.RawTokens, raw)
	}
	if pay != r.PayloadTokens {
		add("results.json: payload_tokens %d != sum of per_session payload_tokens %d", r.PayloadTokens, pay)
	}
	if ins != r.InstructionTokens {
		add("results.json: instruction_tokens %d != sum of per_session instruction_tokens %d", r.InstructionTokens, ins)
	}
	if handoffs != r.Handoffs || len(r.PerSession) != r.Sessions {
		add("results.json: test_handoffs %d / test_sessions %d != per_session (%d / %d)", r.Handoffs, r.Sessions, handoffs, len(r.PerSession))
	}
	if never != r.NeverBreakEven {
		add("results.json: never_break_even %d != %d sessions with break_even 0", r.NeverBreakEven, never)
	}
	m := medianBreakEven(r.PerSession)
	if (m == nil) != (r.MedianBreakEven == nil) || (m != nil && !near(*m, *r.MedianBreakEven)) {
		add("results.json: median_break_even %s != %s recomputed from per_session", breakEvenText(r.MedianBreakEven), breakEvenText(m))
	}
	for name, b := range r.Baselines {
		if b.Error == "" && !near(b.Saving, saving(r.FullCostTokens, b.Tokens)) {
			add("results.json: baselines.%s.saving %v != 1 - full_cost_tokens/%d", name, b.Saving, b.Tokens)
		}
	}
	if r.Thresholds.MinSaving != MinSaving || r.Thresholds.MaxMedianBreakEven != MaxBreakEven {
		add("results.json: thresholds %+v differ from the rules (saving ≥ %v, median break-even ≤ %v)", r.Thresholds, MinSaving, MaxBreakEven)
	}
	if want := Verdict(r.Saving, r.MedianBreakEven); r.Verdict != want {
		add("results.json: verdict %q, but saving %s and median break-even %s make it %q", r.Verdict, pct(r.Saving), breakEvenText(r.MedianBreakEven), want)
	}
	savings := []float64{r.Saving}
	for _, rt := range r.Retest {
		if !near(rt.Saving, saving(rt.FullCostTokens, rt.RawTokens)) {
			add("results.json: retest seed %d: saving %v != 1 - %d/%d", rt.Seed, rt.Saving, rt.FullCostTokens, rt.RawTokens)
		}
		savings = append(savings, rt.Saving)
	}
	if len(savings) != len(r.Stability.Savings) {
		add("results.json: stability.savings has %d entries, want %d (the main seed and each re-test)", len(r.Stability.Savings), len(savings))
	} else {
		for i := range savings {
			if !near(savings[i], r.Stability.Savings[i]) {
				add("results.json: stability.savings[%d] %v != %v", i, r.Stability.Savings[i], savings[i])
			}
		}
	}
	lo, hi, d := spread(savings)
	if !near(lo, r.Stability.Min) || !near(hi, r.Stability.Max) || !near(d, r.Stability.Spread) {
		add("results.json: stability min/max/spread %v/%v/%v != %v/%v/%v", r.Stability.Min, r.Stability.Max, r.Stability.Spread, lo, hi, d)
	}

	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		return nil, err
	}
	for _, f := range Facts(&r) {
		if !strings.Contains(string(md), f+"\n") {
			add("report.md does not state %q (from results.json)", strings.TrimPrefix(f, "- "))
		}
	}
	if sessions != nil {
		recounted, err := Recount(&r, sessions)
		if err != nil {
			return nil, err
		}
		bad = append(bad, recounted...)
		var man Manifest
		mb, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(mb, &man); err != nil {
			return nil, fmt.Errorf("manifest.json: %w", err)
		}
		fp := Fingerprint(sessions)
		if man.Fingerprint != fp {
			add("manifest.json: corpus_fingerprint %s, but the source's is %s", man.Fingerprint, fp)
		}
		if r.Fingerprint != fp {
			add("results.json: corpus_fingerprint %s, but the source's is %s", r.Fingerprint, fp)
		}
	}
	return bad, nil
}

// Recount rebuilds the winner from results.json (its improvements, fitted on the
// training sessions it names), encodes every test session again and counts, with the
// release's encoding, exactly the texts a reader receives: the payload (Payload()), the
// instructions and the dictionary. Every figure of results.json that differs is named.
func Recount(r *Results, sessions []trace.Session) ([]string, error) {
	var bad []string
	add := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	tok, err := bpe.Get(r.Encoding)
	if err != nil {
		return nil, fmt.Errorf("results.json: encoding: %w", err)
	}
	byID := map[string]*trace.Session{}
	for i := range sessions {
		byID[sessions[i].ID] = &sessions[i]
	}
	var ims []Improvement
	for _, label := range r.Winner {
		im, ok := Lookup(label)
		if !ok {
			add("results.json: winner names %q, which is not in the search space", label)
			return bad, nil
		}
		ims = append(ims, im)
	}
	if r.Selection == nil {
		add("results.json: no selection to rebuild the winner from")
		return bad, nil
	}
	var train []a2c.Input
	for _, id := range r.Selection.TrainSessions {
		s, ok := byID[id]
		if !ok {
			add("results.json: training session %s is not in the source", id)
			return bad, nil
		}
		train = append(train, a2c.Input{ID: id, Records: a2c.RecordValues(s)})
	}
	opt := Build(ims, train, tok)
	dictUsed := false
	for _, f := range r.PerSession {
		s, ok := byID[f.ID]
		if !ok {
			add("results.json: per_session %s is not in the source", f.ID)
			continue
		}
		recs := a2c.RecordValues(s)
		enc, err := a2c.EncodeSession("", recs, opt)
		if err != nil {
			return nil, fmt.Errorf("session %s: %w", f.ID, err)
		}
		raw := 0
		for i := range recs {
			raw += tok.Count(string(trace.Canonical(&recs[i])))
		}
		if raw != f.RawTokens {
			add("results.json: per_session %s: raw_tokens %d, recounted %d", f.ID, f.RawTokens, raw)
		}
		if n := tok.Count(enc.Payload()); n != f.PayloadTokens {
			add("results.json: per_session %s: payload_tokens %d, but the payload as shipped counts %d", f.ID, f.PayloadTokens, n)
		}
		if n := tok.Count(enc.Instructions); n != f.InstructionTokens {
			add("results.json: per_session %s: instruction_tokens %d, but the instructions as shipped count %d", f.ID, f.InstructionTokens, n)
		}
		dictUsed = dictUsed || enc.UsesDict
	}
	want := 0
	if dictUsed {
		packed, _ := opt.Dictionary.Packed()
		want = tok.Count(packed)
	}
	if want != r.DictionaryTokens {
		add("results.json: dictionary_tokens %d, but the dictionary as shipped counts %d", r.DictionaryTokens, want)
	}
	return bad, nil
}
