package a2c

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/parleyhq/parley/trace"
)

// Dictionary is text both sides hold before a session starts. Splices may point into it
// as if it were the start of every session.
//
// How it is charged is an accounting choice (see DictCharge): a dictionary is a
// versioned asset of a deployment, shipped once to a receiver and reused for every
// session, so by default its full size is charged once to the measured set (and shared
// equally among the sessions that use it for break-even); DictPerSession charges it to
// every session that uses it, which no dictionary can win against, since a splice
// into it never costs less than nothing.
type Dictionary struct {
	Text string
}

// packMinSplice is the shortest span Packed copies, in bytes: the packing counts no
// tokens, so that a dictionary ships as the same text whatever the tokenizer. Chosen on
// the training side (the sessions HoldOut(…, 3) keeps, 3-fold, toolbench + openai +
// swe-agent, full cost in cl100k tokens): 8 bytes 183,225; 12 181,916; 14 181,762; 16
// 181,794; 20 181,889; 24 181,988.
const packMinSplice = 14

// Packed returns the dictionary as it ships to a reader: its text written as the line
// before the session's first (the dictionary comes first in the session text: see
// newState), with splices into itself by the payload's rules, so that a piece it holds
// twice (two wordings of one tool's definition that share its parameters) ships once.
// spliced reports whether it holds a splice; without one, Packed is the text with only
// its escapes. UnpackDictionary reverses it.
func (d *Dictionary) Packed() (text string, spliced bool) {
	packMu.Lock()
	p, ok := packCache[d.Text]
	packMu.Unlock()
	if ok {
		return p.text, p.spliced
	}
	e := NewEncoder(Options{Splices: true, MinSplice: packMinSplice})
	p = packed{string(e.splice([]byte(d.Text))), e.feat.Splices}
	packMu.Lock()
	if len(packCache) >= 64 {
		clear(packCache)
	}
	packCache[d.Text] = p
	packMu.Unlock()
	return p.text, p.spliced
}

type packed struct {
	text    string
	spliced bool
}

// packCache keeps the packed form of the dictionaries in use: Adapt encodes a session
// several times, and each encoding's instructions say whether its dictionary is spliced.
var (
	packMu    sync.Mutex
	packCache = map[string]packed{}
)

// UnpackDictionary returns the dictionary a Packed text stands for.
func UnpackDictionary(packed string) (*Dictionary, error) {
	d := NewDecoder(nil)
	t, err := d.expand(packed)
	if err != nil {
		return nil, err
	}
	return &Dictionary{Text: string(t)}, nil
}

// CheckLen is the number of decimal digits of a dictionary's check value.
const CheckLen = 6

// Check returns the dictionary's check value, which a payload that uses the dictionary
// carries in its header (a2c/2+d<check>) so that decoding with another dictionary is
// refused instead of copying the wrong bytes: the first 8 bytes of the SHA-256 of Text,
// read as a big-endian number, modulo 10^6, in six decimal digits. Six digits cost two
// tokens (cl100k and o200k split digits into groups of three) and let one wrong
// dictionary in a million through.
func (d *Dictionary) Check() string {
	sum := sha256.Sum256([]byte(d.Text))
	return fmt.Sprintf("%0*d", CheckLen, binary.BigEndian.Uint64(sum[:8])%1_000_000)
}

// The dictionary file: the dictionary's text, then one newline. It is what
// `parley a2c train` writes and what --dict reads; any text file is a dictionary, and only
// the one newline that ends the file is not part of it.

// ReadDictionary reads a dictionary file.
func ReadDictionary(r io.Reader) (*Dictionary, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return &Dictionary{Text: strings.TrimSuffix(string(b), "\n")}, nil
}

// WriteTo writes the dictionary file.
func (d *Dictionary) WriteTo(w io.Writer) (int64, error) {
	n, err := io.WriteString(w, d.Text+"\n")
	return int64(n), err
}

// LoadDictionary reads the dictionary file at path.
func LoadDictionary(path string) (*Dictionary, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadDictionary(f)
}

// WriteFile writes the dictionary file at path (mode 0644), replacing what was there.
func (d *Dictionary) WriteFile(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := d.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// DictionaryError is a payload whose header names a dictionary other than the one it is
// decoded with. Want is the check value in the header ("" when the payload predates
// check values); Got is the given dictionary's ("" when none was given).
type DictionaryError struct {
	Want, Got string
}

func (e *DictionaryError) Error() string {
	switch {
	case e.Got == "" && e.Want == "":
		return "a2c: the payload was encoded with a dictionary; pass it (--dict)"
	case e.Got == "":
		return fmt.Sprintf("a2c: the payload was encoded with dictionary %s; pass it (--dict)", e.Want)
	}
	return fmt.Sprintf("a2c: the payload was encoded with dictionary %s, not with the one given (%s); pass the dictionary it was encoded with", e.Want, e.Got)
}

// DictCharge says how a dictionary's tokens enter the full cost.
type DictCharge int

const (
	DictOnce       DictCharge = iota // once for the measured set, in full
	DictPerSession                   // in full for every session that uses it
)

// DefaultMinShare is Train's default MinShare, chosen on the training side only
// (TestTrainDefaultsWinOnTrainingSessions: the sessions HoldOut(…, 3) keeps, each source
// measured by 3-fold cross-validation, so every dictionary is charged once to the few
// sessions it did not see). Full cost, cl100k, toolbench + openai + swe-agent, with
// Default's options: 0.2 (the old default) 200,026 tokens; 0.3 196,225; 0.4 195,177; 0.5
// 195,724. A piece that occurs in only a fifth of the sessions rarely pays for its own
// bytes in the dictionary.
const DefaultMinShare = 0.4

// TrainOptions bounds dictionary learning.
type TrainOptions struct {
	MaxBytes int     // total size; default DefaultMaxBytes
	MinShare float64 // a piece must occur in at least this share of sessions; default DefaultMinShare
	MinLen   int     // shortest piece kept, in bytes; default 24
	// NoEncoded leaves out the encoded pieces: objects and arrays as the compact value
	// notation writes them (a tool's whole definition, a status record's frame).
	NoEncoded bool
	// Counter, when set, prunes the dictionary by use: every training session is
	// encoded with it (Default's options, Adapt off) and only the spans that splices of
	// at least MinShare of the sessions copied are kept. Nil (or NoPrune) keeps every
	// piece. MeasureFolds sets it to its own Counter.
	Counter Counter
	NoPrune bool
	// PruneWorth: with a Counter, a span is kept only when the splices into it saved,
	// over the training sessions, at least PruneWorth times its own tokens; default
	// DefaultPruneWorth.
	PruneWorth float64
	// NoFrequent leaves out the frequent runs: the runs of the sessions' text as the
	// payload writes it (no splices) covered by MinLen-byte strings found in MinShare
	// of the sessions (frequentRuns).
	NoFrequent bool
}

// DefaultMaxBytes is TrainOptions.MaxBytes's default. With pruning, what a larger
// budget lets in and no session copies is dropped again; chosen on the training side
// (TestTrainDefaultsWinOnTrainingSessions) against 8 and 32 KiB.
const DefaultMaxBytes = 16384

// DefaultPruneWorth is TrainOptions.PruneWorth's default. A dictionary learned on the
// training side serves held-out sessions about half as many as it was learned from
// (HoldOut(…, 3) and 3-fold cross-validation alike), so a span must save at least twice
// its tokens on its own sessions to pay on new ones; 3 leaves a margin for what it
// learned by heart. Chosen on the training side (TestTrainDefaultsWinOnTrainingSessions):
// 2 and 4 both cost more.
const DefaultPruneWorth = 3

// Train learns a dictionary from training sessions. Pieces are the lines of every
// string value (system prompts, tool descriptions, boilerplate of tool results), the
// whole values up to 2 KB, (unless NoEncoded) every object and array up to 2 KB as
// the compact value notation writes it, so that a tool's whole definition is one span a
// single splice copies, and (unless NoFrequent) the runs of the payload text that
// recur (frequentRuns: the frames of records around the values that differ); a piece is kept when it occurs in at least MinShare of the
// sessions, most bytes saved first, until MaxBytes. Kept pieces are written in the order
// they first occur, joined by newlines, so that a block of boilerplate lines stays one
// block that a single splice can copy. With a Counter the result is then pruned to the
// spans the sessions' splices copy and that pay for themselves (prune). It sees only the sessions it is given: pass the
// training split.
func Train(sessions [][]trace.Value, opt TrainOptions) *Dictionary {
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = DefaultMaxBytes
	}
	if opt.PruneWorth <= 0 {
		opt.PruneWorth = DefaultPruneWorth
	}
	if opt.MinShare <= 0 {
		opt.MinShare = DefaultMinShare
	}
	if opt.MinLen <= 0 {
		opt.MinLen = 24
	}
	count := map[string]int{}
	first := map[string]int{}
	order := 0
	venc := NewEncoder(Options{Bare: true, Embedded: true})
	for _, s := range sessions {
		seen := map[string]bool{}
		note := func(p string) {
			if len(p) < opt.MinLen || seen[p] {
				return
			}
			seen[p] = true
			count[p]++
			if _, ok := first[p]; !ok {
				first[p] = order
				order++
			}
		}
		var walk func(v *trace.Value)
		walk = func(v *trace.Value) {
			switch v.Kind {
			case trace.String:
				if len(v.Str) <= 2048 {
					note(v.Str)
				}
				if strings.IndexByte(v.Str, '\n') >= 0 {
					for _, l := range strings.Split(v.Str, "\n") {
						note(l)
					}
				}
				if ev, _, _, ok := detectEmbedded(v.Str, nil); ok {
					walk(&ev)
				}
			case trace.Array:
				if !opt.NoEncoded {
					if t := venc.value(nil, v); len(t) <= 2048 {
						note(string(t))
					}
				}
				for i := range v.Items {
					walk(&v.Items[i])
				}
			case trace.Object:
				if !opt.NoEncoded {
					if t := venc.value(nil, v); len(t) <= 2048 {
						note(string(t))
					}
				}
				for i := range v.Members {
					walk(&v.Members[i].Value)
				}
			}
		}
		for i := range s {
			walk(&s[i])
		}
	}
	min := int(opt.MinShare*float64(len(sessions)) + 0.999)
	if min < 2 {
		min = 2
	}
	if !opt.NoFrequent {
		runs := frequentRuns(sessions, min, opt.MinLen)
		for _, r := range slices.Sorted(maps.Keys(runs)) { // a map's order would make the dictionary differ run to run
			if n := runs[r]; count[r] == 0 {
				count[r] = n
				first[r] = order
				order++
			}
		}
	}
	type cand struct {
		s     string
		score int
	}
	var cs []cand
	for s, n := range count {
		if n >= min {
			cs = append(cs, cand{s, n * len(s)})
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].score != cs[j].score {
			return cs[i].score > cs[j].score
		}
		return cs[i].s < cs[j].s
	})
	var kept []string
	size := 0
	for _, c := range cs {
		// A piece inside one already kept adds nothing.
		dup := false
		for _, k := range kept {
			if strings.Contains(k, c.s) {
				dup = true
				break
			}
		}
		if dup || size+len(c.s)+1 > opt.MaxBytes {
			continue
		}
		kept = append(kept, c.s)
		size += len(c.s) + 1
	}
	sort.Slice(kept, func(i, j int) bool { return first[kept[i]] < first[kept[j]] })
	var b strings.Builder
	for i, k := range kept {
		if i > 0 {
			b.WriteByte('\n')
		}
		// Written as a raw field writes text (newlines kept), so a splice copies a
		// piece into a line unchanged.
		for j, l := range strings.Split(k, "\n") {
			if j > 0 {
				b.WriteByte('\n')
			}
			b.Write(appendEscaped(nil, l, '|'))
		}
	}
	d := &Dictionary{Text: b.String()}
	if opt.Counter != nil && !opt.NoPrune && d.Text != "" {
		d = prune(d, sessions, opt.Counter, min, opt.PruneWorth)
	}
	return d
}

// prune keeps the spans of d that splices of at least min of the sessions copied (each
// session encoded with Default's options, Adapt off) and that saved, over all of them,
// at least worth times the span's own tokens (each splice's saving, in context, spread
// evenly over the bytes it copied), joined by newlines. Spans shorter than the match
// finder's hash are dropped: nothing could find them.
func prune(d *Dictionary, sessions [][]trace.Value, c Counter, min int, worth float64) *Dictionary {
	used := make([]int, len(d.Text))
	saved := make([]float64, len(d.Text))
	opt := Default(c)
	opt.Adapt, opt.Dictionary = false, d
	for _, s := range sessions {
		enc := NewEncoder(opt)
		enc.dictUsed = make([]bool, enc.st.dictLen)
		enc.dictSaved = make([]float64, enc.st.dictLen)
		for i := range s {
			if _, err := enc.Encode(&s[i]); err != nil {
				return d // a record the codec cannot encode: keep the dictionary whole
			}
		}
		for i := range used {
			if enc.dictUsed[i] {
				used[i]++
			}
			saved[i] += enc.dictSaved[i]
		}
	}
	var b strings.Builder
	for i := 0; i < len(used); {
		if used[i] < min {
			i++
			continue
		}
		j := i
		for j < len(used) && used[j] >= min {
			j++
		}
		k, l := i, j
		for k < l && !utf8.RuneStart(d.Text[k]) {
			k++
		}
		for l > k && l < len(d.Text) && !utf8.RuneStart(d.Text[l]) {
			l--
		}
		value := 0.0
		for x := k; x < l; x++ {
			value += saved[x]
		}
		if l-k >= hashLen && value >= worth*float64(c.Count(d.Text[k:l])) {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(d.Text[k:l])
		}
		i = j
	}
	return &Dictionary{Text: b.String()}
}

// frequentRuns returns the runs of the sessions' payload text (Default's options, no
// splices, no Adapt) covered by minLen-byte strings that occur in at least min sessions,
// each with the number of sessions that hold it whole.
func frequentRuns(sessions [][]trace.Value, min, minLen int) map[string]int {
	opt := Default(nil)
	opt.Splices, opt.Adapt = false, false
	texts := make([]string, 0, len(sessions))
	for _, s := range sessions {
		enc := NewEncoder(opt)
		var b strings.Builder
		for i := range s {
			l, err := enc.Encode(&s[i])
			if err != nil {
				return nil
			}
			b.WriteString(l)
			b.WriteByte('\n')
		}
		texts = append(texts, b.String())
	}
	hash := func(s string) uint64 {
		h := uint64(14695981039346656037)
		for i := 0; i < len(s); i++ {
			h = (h ^ uint64(s[i])) * 1099511628211
		}
		return h
	}
	seen := map[uint64]int{}
	for _, t := range texts {
		mine := map[uint64]bool{}
		for i := 0; i+minLen <= len(t); i++ {
			mine[hash(t[i:i+minLen])] = true
		}
		for h := range mine {
			seen[h]++
		}
	}
	runs := map[string]int{}
	// (A run may reach into text that varies through strings a few sessions share, and
	// then be held whole by none. Runs found again at rising thresholds, to recover the
	// frame inside, lost on the training side: toolbench -52 tokens, all sources +204.)
	addRuns(runs, texts, minLen, func(s string) bool { return seen[hash(s)] >= min })
	for r := range runs {
		n := 0
		for _, t := range texts {
			if strings.Contains(t, r) {
				n++
			}
		}
		runs[r] = n
	}
	return runs
}

// addRuns adds to runs every run of the texts covered by minLen-byte strings that
// frequent accepts (up to 2 KiB, cut to character boundaries).
func addRuns(runs map[string]int, texts []string, minLen int, frequent func(string) bool) {
	for _, t := range texts {
		cover := make([]bool, len(t))
		for i := 0; i+minLen <= len(t); i++ {
			if frequent(t[i : i+minLen]) {
				for j := i; j < i+minLen; j++ {
					cover[j] = true
				}
			}
		}
		for i := 0; i < len(t); {
			if !cover[i] {
				i++
				continue
			}
			j := i
			for j < len(t) && cover[j] {
				j++
			}
			k, l := i, j
			for k < l && !utf8.RuneStart(t[k]) {
				k++
			}
			for l > k && l < len(t) && !utf8.RuneStart(t[l]) {
				l--
			}
			if l-k >= minLen && l-k <= 2048 {
				runs[t[k:l]] = 0
			}
			i = j
		}
	}
}
