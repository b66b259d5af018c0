package a2c

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/parleyhq/parley/trace"
)

// Encoded is one session in a2c/2: the payload (header line, then one line per record)
// and the decode instructions that describe the features it uses.
type Encoded struct {
	Header       string   // "a2c/2", "+d" and the dictionary's check value when it is used, then " " and the id
	Lines        []string // one payload line per record, in order
	Instructions string
	Features     Features
	UsesDict     bool
}

// Payload returns the header and the record lines, each ending in a newline.
func (e *Encoded) Payload() string {
	var b strings.Builder
	b.WriteString(e.Header)
	b.WriteByte('\n')
	for _, l := range e.Lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// adaptShare: Adapt tries dropping mechanisms only when the instructions are at least
// 1/adaptShare of the session's payload and instructions; below that no explanation can
// cost more than the mechanism saves often enough to pay for the extra encodings.
const adaptShare = 20

// adaptSteps are the changes Adapt may make to a session's options, each removing a part
// of the instructions, in the order they are tried.
var adaptSteps = []struct {
	name  string
	apply func(o *Options) bool // false when it changes nothing
}{
	{"embedded", func(o *Options) bool { ok := o.Embedded; o.Embedded = false; return ok }},
	{"kind names", func(o *Options) bool { ok := o.Schema && !o.KindNames; o.KindNames = true; return ok }},
	{"defaults", func(o *Options) bool { ok := o.Schema && !o.NoDefaults; o.NoDefaults = true; return ok }},
	{"raw values", func(o *Options) bool { ok := o.Schema && o.RawValues; o.RawValues = false; return ok }},
	{"value refs", func(o *Options) bool { ok := o.ValueRefs; o.ValueRefs = false; return ok }},
	{"splices", func(o *Options) bool { ok := o.Splices; o.Splices = false; return ok }},
	{"letter splices", func(o *Options) bool { ok := o.Splices && !o.noLetters; o.noLetters = true; return ok }},
	{"bare", func(o *Options) bool { ok := o.Bare; o.Bare = false; return ok }},
	{"schema", func(o *Options) bool {
		ok := o.Schema
		o.Schema, o.RawNewlines, o.KindNames = false, false, false
		return ok
	}},
}

// EncodeSession encodes a session's records (JSON objects) with the given options.
//
// With opt.Adapt (and a Counter) it also weighs, for this session alone, each mechanism
// against the words that explain it: it drops, greedily, whichever change (adaptSteps)
// lowers payload + instruction tokens the most, until none does. The decoder reads any
// mix, so the payload needs no mark of what was dropped; the instructions describe what
// is left.
func EncodeSession(id string, recs []trace.Value, opt Options) (out *Encoded, err error) {
	out, err = encodeSession(id, recs, opt)
	if err != nil || !opt.Adapt || opt.Counter == nil || opt.FullInstructions {
		return out, err
	}
	c := opt.Counter
	cost := func(e *Encoded) int { return c.Count(e.Payload()) + c.Count(e.Instructions) }
	best := cost(out)
	if opt.Prose && !opt.proseLines && ProseFits(recs) {
		// Prose lines, with the splices (lengths as letters or in digits) and without
		// them, against what the
		// mechanisms below arrive at.
		defer func() {
			if err != nil {
				return
			}
			for _, v := range []struct{ splices, letters bool }{{true, true}, {true, false}, {false, false}} {
				o := opt
				o.proseLines, o.Splices = true, opt.Splices && v.splices
				o.noLetters = o.noLetters || !v.letters
				p, perr := encodeSession(id, recs, o)
				if perr != nil {
					out, err = nil, perr
					return
				}
				if k := cost(p); k < best {
					out, best = p, k
				}
			}
		}()
	}
	if c.Count(out.Instructions)*adaptShare < best {
		return out, nil
	}
	cur := opt
	for {
		var next *Encoded
		var nextOpt Options
		try := func(o Options) error {
			e, err := encodeSession(id, recs, o)
			if err != nil {
				return err
			}
			if k := cost(e); k < best {
				best, next, nextOpt = k, e, o
			}
			return nil
		}
		for _, st := range adaptSteps {
			o := cur
			if !st.apply(&o) {
				continue
			}
			if err := try(o); err != nil {
				return nil, err
			}
		}
		// One embedded-JSON style at a time, and the cut: each is a clause of the
		// instructions.
		if cur.Embedded && !cur.wholeEmbedded && len(out.Features.Styles) > 1 {
			for _, tag := range sortedTags(out.Features.Styles) {
				o := cur
				o.offStyles += string(tag)
				if err := try(o); err != nil {
					return nil, err
				}
			}
		}
		if cur.Embedded && !cur.wholeEmbedded && out.Features.Cut {
			o := cur
			o.noCut = true
			if err := try(o); err != nil {
				return nil, err
			}
		}
		if next == nil {
			return out, nil
		}
		out, cur = next, nextOpt
	}
}

func sortedTags(m map[byte]bool) []byte {
	var ts []byte
	for t := range m {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	return ts
}

func encodeSession(id string, recs []trace.Value, opt Options) (*Encoded, error) {
	enc := NewEncoder(opt)
	out := &Encoded{Lines: make([]string, len(recs))}
	for i := range recs {
		l, err := enc.Encode(&recs[i])
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", i+1, err)
		}
		out.Lines[i] = l
	}
	out.Features = enc.Features()
	out.UsesDict = out.Features.Dictionary
	if out.UsesDict {
		_, out.Features.DictSpliced = opt.Dictionary.Packed()
	}
	h := PayloadHeader{ID: id, Dict: out.UsesDict, Prose: out.Features.Prose}
	if h.Dict {
		h.Check = opt.Dictionary.Check()
	}
	out.Header = h.String()
	out.Instructions = Instructions(out.Features, opt.FullInstructions)
	return out, nil
}

// RecordValues returns the records of a trace session as JSON objects.
func RecordValues(s *trace.Session) []trace.Value {
	out := make([]trace.Value, len(s.Records))
	for i := range s.Records {
		out[i] = s.Records[i].Value()
	}
	return out
}

// PayloadHeader is what the first line of a payload says.
type PayloadHeader struct {
	ID   string
	Dict bool // the payload uses a dictionary
	// Check is the dictionary's check value (Dictionary.Check). It is empty only in
	// payloads written before check values existed, whose dictionary cannot be checked.
	Check string
	// Prose: every record line is a prose line (Options.Prose); the header says +t.
	Prose bool
}

// String writes the header line: a2c/2, +t for prose lines, +d and the check value when the payload uses a
// dictionary, then a space and the id (escaped as a raw field) when there is one.
func (h PayloadHeader) String() string {
	s := Magic
	if h.Prose {
		s += "+t"
	}
	if h.Dict {
		s += "+d" + h.Check
	}
	if h.ID != "" {
		s += " " + string(appendEscaped(nil, h.ID, '|'))
	}
	return s
}

// ParseHeader reads a header line.
func ParseHeader(line string) (PayloadHeader, error) {
	var h PayloadHeader
	rest, ok := strings.CutPrefix(line, Magic)
	if !ok && strings.HasPrefix(line, "a2c/1") {
		return h, &SyntaxError{Line: 1, Msg: "an a2c/1 payload (splices written «…): this parley reads " + Magic + " (splices written .x…, ^… and ?…); encode the session again"}
	}
	if !ok {
		return h, &SyntaxError{Line: 1, Msg: fmt.Sprintf("header must start with %q", Magic)}
	}
	h.Prose = strings.HasPrefix(rest, "+t")
	if h.Prose {
		rest = rest[2:]
	}
	if r, ok := strings.CutPrefix(rest, "+d"); ok {
		h.Dict, rest = true, r
		n := 0
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n > 0 && n != CheckLen {
			return PayloadHeader{}, &SyntaxError{Line: 1, Offset: len(Magic) + 2, Msg: fmt.Sprintf("malformed header: the dictionary's check value has %d digits, want %d", n, CheckLen)}
		}
		h.Check, rest = rest[:n], rest[n:]
	}
	if rest == "" {
		return h, nil
	}
	if rest[0] != ' ' {
		return PayloadHeader{}, &SyntaxError{Line: 1, Msg: "malformed header"}
	}
	r := reader{s: rest[1:], d: &Decoder{line: 1}}
	var buf []byte
	for r.pos < len(r.s) {
		if r.s[r.pos] != '\\' {
			buf = append(buf, r.s[r.pos])
			r.pos++
			continue
		}
		var err error
		if buf, err = r.escape(buf, "|"); err != nil {
			return PayloadHeader{}, err
		}
	}
	h.ID = string(buf)
	return h, nil
}

// DecodeSession decodes one session payload (header and record lines) and returns the id
// and the records. dict must be the dictionary the payload was encoded with when its
// header says it used one (it is ignored otherwise): a missing dictionary, or one whose
// check value is not the header's, is a *DictionaryError and nothing is decoded.
func DecodeSession(payload string, dict *Dictionary) (string, []trace.Value, error) {
	lines := strings.Split(strings.TrimSuffix(payload, "\n"), "\n")
	h, err := ParseHeader(lines[0])
	if err != nil {
		return "", nil, err
	}
	switch {
	case !h.Dict:
		dict = nil
	case dict == nil:
		return h.ID, nil, &DictionaryError{Want: h.Check}
	case h.Check != "":
		if got := dict.Check(); got != h.Check {
			return h.ID, nil, &DictionaryError{Want: h.Check, Got: got}
		}
	}
	dec := NewDecoder(dict)
	dec.prose = h.Prose
	out := make([]trace.Value, 0, len(lines)-1)
	recs := lines[1:]
	if !h.Prose { // prose lines never continue over several lines
		recs = groupRecords(recs)
	}
	for _, rec := range recs {
		v, err := dec.Decode(rec)
		if err != nil {
			return h.ID, out, err
		}
		out = append(out, v)
	}
	return h.ID, out, nil
}

// SplitStream splits concatenated payloads (as `parley a2c encode` writes them) at their
// header lines. A record line never starts with the magic: kinds are one letter, ~ or a
// quoted string, and schema-less lines start with {.
func SplitStream(data string) []string {
	var out []string
	start := -1
	for pos := 0; pos < len(data); {
		end := strings.IndexByte(data[pos:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += pos
		}
		if strings.HasPrefix(data[pos:end], Magic) {
			if start >= 0 {
				out = append(out, data[start:pos])
			}
			start = pos
		}
		pos = end + 1
	}
	if start >= 0 {
		out = append(out, data[start:])
	}
	return out
}

// Verify encodes a session, decodes it and compares the canonical JSON of every record.
// It returns the encoding and the number of records that differ.
func Verify(id string, recs []trace.Value, opt Options) (*Encoded, int, error) {
	enc, err := EncodeSession(id, recs, opt)
	if err != nil {
		return nil, 0, err
	}
	var dict *Dictionary
	if enc.UsesDict {
		dict = opt.Dictionary
	}
	gotID, got, err := DecodeSession(enc.Payload(), dict)
	if err != nil {
		return enc, len(recs), err
	}
	bad := 0
	if gotID != id {
		bad++
	}
	for i := range recs {
		if i >= len(got) || !bytes.Equal(trace.Canonical(&recs[i]), trace.Canonical(&got[i])) {
			bad++
		}
	}
	if len(got) > len(recs) {
		bad += len(got) - len(recs)
	}
	return enc, bad, nil
}

// groupRecords joins continuation lines (text that kept its newlines) to the record line
// before them.
func groupRecords(lines []string) []string {
	var out []string
	start := 0
	for i := 1; i <= len(lines); i++ {
		if i == len(lines) || RecordStart(lines[i]) {
			if start < i {
				out = append(out, strings.Join(lines[start:i], "\n"))
			}
			start = i
		}
	}
	return out
}

// Shipped is one session as a reader receives it: the texts that travel and the token
// count of each, counted on that text alone. `parley a2c encode --json` prints it.
type Shipped struct {
	ID                string `json:"id"`
	Payload           string `json:"payload"`
	Instructions      string `json:"instructions"`
	Dictionary        string `json:"dictionary"` // the dictionary as it ships (Dictionary.Packed) when the payload uses it, else ""
	PayloadTokens     int    `json:"payload_tokens"`
	InstructionTokens int    `json:"instruction_tokens"`
	DictionaryTokens  int    `json:"dictionary_tokens"`
	FullCostTokens    int    `json:"full_cost_tokens"`
}

// Ship returns what an encoded session sends, each text with its count by c. dict is
// the dictionary the session was encoded with (nil for none).
func Ship(id string, enc *Encoded, dict *Dictionary, c Counter) Shipped {
	s := Shipped{ID: id, Payload: enc.Payload(), Instructions: enc.Instructions}
	if enc.UsesDict && dict != nil {
		s.Dictionary, _ = dict.Packed()
	}
	s.PayloadTokens = c.Count(s.Payload)
	s.InstructionTokens = c.Count(s.Instructions)
	if s.Dictionary != "" {
		s.DictionaryTokens = c.Count(s.Dictionary)
	}
	s.FullCostTokens = s.PayloadTokens + s.InstructionTokens + s.DictionaryTokens
	return s
}
