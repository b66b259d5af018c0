package a2c

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"strings"

	"github.com/parleyhq/parley/trace"
)

// Baseline is another way to send the same records, counted for comparison.
type Baseline struct {
	Name   string
	Render func(recs []trace.Value) (string, error)
}

// MinifiedJSON renders a session's records as one JSON array, members in record order,
// no whitespace.
var MinifiedJSON = Baseline{Name: "minified_json", Render: func(recs []trace.Value) (string, error) {
	arr := trace.Value{Kind: trace.Array, Items: recs}
	return string(appendStyled(nil, &arr, &style{comma: ",", colon: ":"}, 0)), nil
}}

// PrettyJSON renders a session's records as one JSON array indented by two spaces.
var PrettyJSON = Baseline{Name: "pretty_json", Render: func(recs []trace.Value) (string, error) {
	arr := trace.Value{Kind: trace.Array, Items: recs}
	return string(appendStyled(nil, &arr, &style{comma: ",", colon: ": ", indent: 2}, 0)), nil
}}

// SessionResult is the accounting of one session.
type SessionResult struct {
	ID                string         `json:"id"`
	Handoffs          int            `json:"handoffs"`
	RawTokens         int            `json:"raw_tokens"`
	PayloadTokens     int            `json:"payload_tokens"`
	InstructionTokens int            `json:"instruction_tokens"`
	DictionaryTokens  int            `json:"dictionary_tokens"`
	FullCostTokens    int            `json:"full_cost_tokens"`
	BreakEven         int            `json:"break_even"` // first handoff where cumulative full cost ≤ cumulative raw; 0 = never
	Lossless          bool           `json:"lossless"`
	Baselines         map[string]int `json:"baselines,omitempty"`
}

// Result is the accounting of a set of sessions under one configuration.
type Result struct {
	Encoding          string                    `json:"encoding"`
	Sessions          int                       `json:"sessions"`
	Handoffs          int                       `json:"handoffs"`
	RawTokens         int                       `json:"raw_tokens"`
	PayloadTokens     int                       `json:"payload_tokens"`
	InstructionTokens int                       `json:"instruction_tokens"`
	DictionaryTokens  int                       `json:"dictionary_tokens"`
	FullCostTokens    int                       `json:"full_cost_tokens"`
	Saving            float64                   `json:"saving"`
	MedianBreakEven   *float64                  `json:"median_break_even"` // nil when the median session never breaks even
	NeverBreakEven    int                       `json:"never_break_even"`
	Lossless          bool                      `json:"lossless"`
	LossyRecords      int                       `json:"lossy_records"`
	Baselines         map[string]BaselineResult `json:"baselines"`
	// DictionaryFolds is k when MeasureFolds made the figures (0: one dictionary, or none).
	DictionaryFolds int             `json:"dictionary_folds"`
	PerSession      []SessionResult `json:"-"`
}

// BaselineResult compares a2c's full cost with another rendering of the same records.
type BaselineResult struct {
	Tokens int `json:"tokens"`
	// Saving is 1 − full cost / tokens.
	Saving float64 `json:"saving"`
	Error  string  `json:"error,omitempty"`
}

// Input is one session to measure.
type Input struct {
	ID      string
	Records []trace.Value
	// RawTokens, when it has one count per record, is reused instead of counting the
	// canonical JSON again (it does not depend on the options; see RawCounts).
	RawTokens []int
}

// RawCounts fills in every input's raw token counts once, for repeated measurements.
func RawCounts(in []Input, c Counter) {
	for i := range in {
		if len(in[i].RawTokens) == len(in[i].Records) {
			continue
		}
		in[i].RawTokens = make([]int, len(in[i].Records))
		for j := range in[i].Records {
			in[i].RawTokens[j] = c.Count(string(trace.Canonical(&in[i].Records[j])))
		}
	}
}

// Inputs turns trace sessions into measurement inputs.
func Inputs(ss []trace.Session) []Input {
	out := make([]Input, len(ss))
	for i := range ss {
		out[i] = Input{ID: ss[i].ID, Records: RecordValues(&ss[i])}
	}
	return out
}

// Measure encodes, verifies and counts every session. raw is the canonical JSON of each
// record; full cost is payload + instructions + dictionary (charged in full to each
// session that uses it). progress, when set, is called after each session.
func Measure(ctx context.Context, in []Input, opt Options, c Counter, encoding string, baselines []Baseline, progress func(done, total int)) (*Result, error) {
	res := &Result{Encoding: encoding, Sessions: len(in), Lossless: true, Baselines: map[string]BaselineResult{}}
	dictTokens := 0
	if opt.Dictionary != nil && opt.Dictionary.Text != "" {
		packed, _ := opt.Dictionary.Packed()
		dictTokens = c.Count(packed)
	}
	// Under DictOnce each session's share of the dictionary is what break-even charges;
	// the total charges the whole dictionary once (Measure fixes the rounding below).
	share := dictTokens
	if opt.DictCharge == DictOnce && len(in) > 0 {
		share = (dictTokens + len(in) - 1) / len(in)
	}
	usedDict := false
	var bes []int
	for si := range in {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s := &in[si]
		enc, bad, err := Verify("", s.Records, opt)
		if err != nil && enc == nil {
			return nil, fmt.Errorf("session %s: %w", s.ID, err)
		}
		sr := SessionResult{ID: s.ID, Handoffs: len(s.Records), Lossless: err == nil && bad == 0}
		if !sr.Lossless {
			res.Lossless = false
			res.LossyRecords += max(bad, 1)
		}
		sr.InstructionTokens = c.Count(enc.Instructions)
		if enc.UsesDict {
			usedDict = true
			sr.DictionaryTokens = share
		}
		// The payload is counted as it ships: Payload(), the header and every record line
		// each with its newline. Break-even follows the handoffs one at a time, each
		// charged with the count of what it adds (its line and newline).
		sr.PayloadTokens = c.Count(enc.Payload())
		cumFull := c.Count(enc.Header+"\n") + sr.InstructionTokens + sr.DictionaryTokens
		cumRaw := 0
		for i := range s.Records {
			var raw int
			if len(s.RawTokens) == len(s.Records) {
				raw = s.RawTokens[i]
			} else {
				raw = c.Count(string(trace.Canonical(&s.Records[i])))
			}
			sr.RawTokens += raw
			cumRaw += raw
			cumFull += c.Count(enc.Lines[i] + "\n")
			if sr.BreakEven == 0 && cumFull <= cumRaw {
				sr.BreakEven = i + 1
			}
		}
		sr.FullCostTokens = sr.PayloadTokens + sr.InstructionTokens + sr.DictionaryTokens
		if len(baselines) > 0 {
			sr.Baselines = map[string]int{}
		}
		for _, b := range baselines {
			text, err := b.Render(s.Records)
			if err != nil {
				br := res.Baselines[b.Name]
				br.Error = err.Error()
				res.Baselines[b.Name] = br
				continue
			}
			sr.Baselines[b.Name] = c.Count(text)
		}
		res.Handoffs += sr.Handoffs
		res.RawTokens += sr.RawTokens
		res.PayloadTokens += sr.PayloadTokens
		res.InstructionTokens += sr.InstructionTokens
		res.DictionaryTokens += sr.DictionaryTokens
		res.FullCostTokens += sr.FullCostTokens
		if sr.BreakEven == 0 {
			res.NeverBreakEven++
			bes = append(bes, math.MaxInt)
		} else {
			bes = append(bes, sr.BreakEven)
		}
		res.PerSession = append(res.PerSession, sr)
		if progress != nil {
			progress(si+1, len(in))
		}
	}
	if opt.DictCharge == DictOnce {
		// The whole dictionary, once, however many sessions shared it.
		res.FullCostTokens -= res.DictionaryTokens
		res.DictionaryTokens = 0
		if usedDict {
			res.DictionaryTokens = dictTokens
		}
		res.FullCostTokens += res.DictionaryTokens
	}
	res.Saving = saving(res.FullCostTokens, res.RawTokens)
	res.MedianBreakEven = median(bes)
	for _, b := range baselines {
		br := res.Baselines[b.Name]
		if br.Error != "" {
			res.Baselines[b.Name] = br
			continue
		}
		for _, sr := range res.PerSession {
			br.Tokens += sr.Baselines[b.Name]
		}
		br.Saving = saving(res.FullCostTokens, br.Tokens)
		res.Baselines[b.Name] = br
	}
	return res, nil
}

func saving(full, raw int) float64 {
	if raw == 0 {
		return 0
	}
	return 1 - float64(full)/float64(raw)
}

// median of break-even handoffs; math.MaxInt stands for never. nil when the median
// session never breaks even.
func median(xs []int) *float64 {
	if len(xs) == 0 {
		return nil
	}
	s := append([]int(nil), xs...)
	sort.Ints(s)
	n := len(s)
	var m float64
	if n%2 == 1 {
		if s[n/2] == math.MaxInt {
			return nil
		}
		m = float64(s[n/2])
	} else {
		if s[n/2] == math.MaxInt {
			return nil
		}
		m = float64(s[n/2-1]+s[n/2]) / 2
	}
	return &m
}

// Table renders a result as a readable table.
func (r *Result) Table(title string) string {
	var b strings.Builder
	pct := func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }
	fmt.Fprintf(&b, "%s (%s)\n", title, r.Encoding)
	row := func(k, v string) { fmt.Fprintf(&b, "  %-30s %s\n", k, v) }
	row("sessions / handoffs", fmt.Sprintf("%d / %d", r.Sessions, r.Handoffs))
	row("raw canonical JSON", fmt.Sprintf("%d tokens", r.RawTokens))
	row("payload", fmt.Sprintf("%d", r.PayloadTokens))
	row("decode instructions", fmt.Sprintf("%d", r.InstructionTokens))
	if r.DictionaryFolds > 0 {
		row("dictionary", fmt.Sprintf("%d (%d-fold: each fold's own, learned on the others, charged once)", r.DictionaryTokens, r.DictionaryFolds))
	} else {
		row("dictionary", fmt.Sprintf("%d", r.DictionaryTokens))
	}
	row("full cost", fmt.Sprintf("%d (saving %s)", r.FullCostTokens, pct(r.Saving)))
	row("payload only (not the claim)", pct(saving(r.PayloadTokens, r.RawTokens)))
	mb := "never"
	if r.MedianBreakEven != nil {
		mb = fmt.Sprintf("%g handoffs", *r.MedianBreakEven)
	}
	row("median break-even", mb)
	row("sessions never breaking even", fmt.Sprintf("%d of %d", r.NeverBreakEven, r.Sessions))
	names := make([]string, 0, len(r.Baselines))
	for n := range r.Baselines {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		br := r.Baselines[n]
		if br.Error != "" {
			row("vs "+n, "skipped: "+br.Error)
			continue
		}
		row("vs "+n, fmt.Sprintf("%d tokens (saving %s)", br.Tokens, pct(br.Saving)))
	}
	ll := "byte-exact on every record"
	if !r.Lossless {
		ll = fmt.Sprintf("LOSSY: %d records differ", r.LossyRecords)
	}
	row("round trip", ll)
	return b.String()
}

// MeasureFolds measures with a dictionary that never saw the session it helps encode:
// the sessions are dealt round-robin into k folds, each fold is encoded with a
// dictionary learned (Train) on the other folds, and each fold's dictionary is charged in
// full once. With k < 2 it is Measure without a dictionary. The result adds up the folds.
func MeasureFolds(ctx context.Context, in []Input, opt Options, c Counter, encoding string, baselines []Baseline, k int, topt TrainOptions, progress func(done, total int)) (*Result, error) {
	if k < 2 || len(in) < 2 {
		opt.Dictionary = nil
		return Measure(ctx, in, opt, c, encoding, baselines, progress)
	}
	k = min(k, len(in))
	opt.DictCharge = DictOnce
	if topt.Counter == nil {
		topt.Counter = c
	}
	total := &Result{Encoding: encoding, Lossless: true, Baselines: map[string]BaselineResult{}, DictionaryFolds: k}
	done := 0
	for f := 0; f < k; f++ {
		var test []Input
		var train [][]trace.Value
		for i := range in {
			if i%k == f {
				test = append(test, in[i])
			} else {
				train = append(train, in[i].Records)
			}
		}
		o := opt
		o.Dictionary = Train(train, topt)
		res, err := Measure(ctx, test, o, c, encoding, baselines, func(d, _ int) {
			if progress != nil {
				progress(done+d, len(in))
			}
		})
		if err != nil {
			return nil, err
		}
		done += len(test)
		total.Sessions += res.Sessions
		total.Handoffs += res.Handoffs
		total.RawTokens += res.RawTokens
		total.PayloadTokens += res.PayloadTokens
		total.InstructionTokens += res.InstructionTokens
		total.DictionaryTokens += res.DictionaryTokens
		total.FullCostTokens += res.FullCostTokens
		total.NeverBreakEven += res.NeverBreakEven
		total.Lossless = total.Lossless && res.Lossless
		total.LossyRecords += res.LossyRecords
		total.PerSession = append(total.PerSession, res.PerSession...)
		for name, b := range res.Baselines {
			t := total.Baselines[name]
			t.Tokens += b.Tokens
			if b.Error != "" {
				t.Error = b.Error
			}
			total.Baselines[name] = t
		}
	}
	total.Saving = saving(total.FullCostTokens, total.RawTokens)
	var bes []int
	for _, s := range total.PerSession {
		if s.BreakEven == 0 {
			bes = append(bes, math.MaxInt)
		} else {
			bes = append(bes, s.BreakEven)
		}
	}
	total.MedianBreakEven = median(bes)
	for name, b := range total.Baselines {
		if b.Error == "" {
			b.Saving = saving(total.FullCostTokens, b.Tokens)
		}
		total.Baselines[name] = b
	}
	return total, nil
}

// HoldOut splits sessions deterministically by id: a session is held out when the
// FNV-1a (32-bit) hash of its id is divisible by n, so the same session is held out on
// every machine and whatever else the source holds. With n < 2 nothing is held out.
func HoldOut(in []Input, n int) (train, held []Input) {
	for _, s := range in {
		h := fnv.New32a()
		h.Write([]byte(s.ID))
		if n >= 2 && h.Sum32()%uint32(n) == 0 {
			held = append(held, s)
		} else {
			train = append(train, s)
		}
	}
	return train, held
}
