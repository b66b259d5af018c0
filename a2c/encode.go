package a2c

import (
	"bytes"
	"errors"
	"strconv"

	"github.com/parleyhq/parley/trace"
)

// Features records which parts of the format a session used; the decode instructions
// describe exactly these.
type Features struct {
	Schema     bool
	Kinds      map[byte]bool // kind letters used
	Defaults   bool          // an empty field stood for a default
	Absent     bool          // ~ stood for an absent field
	Extra      bool          // the extra-members field was used
	Bare       bool
	ValueRefs  bool
	Splices    bool
	Dictionary bool
	Styles     map[byte]bool
	RawEscapes bool // a raw field needed an escape
	Newlines   bool // a raw field kept a newline
	Quotes     bool // a string was quoted with '
	Cut        bool // an embedded JSON string was cut short
	Close      bool // a splice needed » after its digits
	Long       bool // a ? splice (100 bytes or more)
	Letters    bool // a . splice (the length as a letter)
	Digits     bool // a ^ splice (the length in two digits)
	DotEscaped bool // a literal . was written .»
	// DictSpliced: the session uses a dictionary that ships with splices into itself
	// (Dictionary.Packed).
	DictSpliced bool
	Doubled     bool // a literal ^ or ? was written twice
	Originals   bool // a splice copied from the text of a %X string (appendOriginal)
	Prose       bool // the records are prose lines (Options.Prose)
	RawValues   bool // a string in a value slot was written as ~ and raw text
	Fields      int  // the most fields after the kind on any schema line (the instructions name only these)
}

// Encoder encodes one session, one handoff at a time. Each record may refer back to
// anything earlier in its session. The zero value is not usable; use NewEncoder.
type Encoder struct {
	opt   Options
	st    state
	head  []int32 // hash → last position+1
	prev  []int32 // position → previous position+1 with the same hash
	feat  Features
	line  []byte
	out   []byte
	buf   []byte
	costs map[string]int
	late  int // first text position not yet in the match finder
	// The originals: the text of every outermost %X string of the lines so far
	// (appendOriginal), which splices reach beyond the start of the session text, with
	// their own match finder; pending holds the current line's.
	orig         []byte
	ohead, oprev []int32
	olate        int
	pending      []string
	embDepth     int
	// dictUsed, when not nil, marks every byte of the dictionary a kept splice copied
	// (Train's pruning reads it).
	dictUsed []bool
	// dictSaved: the tokens each kept splice saved, spread evenly over the dictionary
	// bytes it copied.
	dictSaved []float64
}

// NewEncoder starts a session.
func NewEncoder(opt Options) *Encoder {
	e := &Encoder{opt: opt, st: newState(opt.Dictionary), head: make([]int32, 1<<16), costs: map[string]int{}}
	e.feat.Kinds = map[byte]bool{}
	e.feat.Styles = map[byte]bool{}
	e.index(0, len(e.st.text))
	return e
}

// Features reports what the session used so far.
func (e *Encoder) Features() Features { return e.feat }

// Encode appends one record (a JSON object, canonical or not) to the session and
// returns its payload line, without the newline.
func (e *Encoder) Encode(rec *trace.Value) (string, error) {
	if rec.Kind != trace.Object {
		return "", errors.New("a2c: a record must be a JSON object")
	}
	e.line = e.line[:0]
	if e.opt.proseLines {
		p, ok := proseOf(rec)
		if !ok {
			return "", errors.New("a2c: the record has no prose form (kind, from, to, text; or a tool call or result)")
		}
		e.feat.Prose = true
		e.line = appendProse(e.line, p)
	} else if e.opt.Schema {
		e.feat.Schema = true
		e.line = e.schemaLine(e.line, rec)
		if e.feat.Newlines {
			e.line = fixNewlines(e.line)
		}
	} else {
		e.line = e.value(e.line, rec)
	}
	out := string(e.splice(e.line))
	for _, o := range e.pending {
		e.orig = appendOriginal(e.orig, o)
	}
	e.pending = e.pending[:0]
	e.indexOrig()
	return out, nil
}

func (e *Encoder) count(s string) int {
	if e.opt.Counter == nil {
		return (len(s) + 3) / 4
	}
	if c, ok := e.costs[s]; ok {
		return c
	}
	c := e.opt.Counter.Count(s)
	if len(e.costs) < 1<<16 {
		e.costs[s] = c
	}
	return c
}

// refFor returns "$n" when the string has a number and the reference is worth it.
func (e *Encoder) refFor(s string, literalCost func() int) (string, bool) {
	if !e.opt.ValueRefs || len(s) < e.opt.minValueLen() {
		return "", false
	}
	n, ok := e.st.strs[s]
	if !ok {
		return "", false
	}
	ref := "$" + strconv.Itoa(n)
	if e.opt.TokenAligned {
		if e.count(ref) >= literalCost() {
			return "", false
		}
	} else if len(ref) >= len(s) {
		return "", false
	}
	return ref, true
}

// fixNewlines escapes every raw newline of a record line that is followed by what
// would read as the start of a record. Raw newlines only come from raw string fields,
// where \n means the same.
func fixNewlines(line []byte) []byte {
	if bytes.IndexByte(line, '\n') < 0 {
		return line
	}
	out := make([]byte, 0, len(line)+8)
	for i := 0; i < len(line); i++ {
		if line[i] == '\n' && RecordStart(string(line[i+1:min(len(line), i+1+len(Magic))])) {
			out = append(out, '\\', 'n')
			continue
		}
		out = append(out, line[i])
	}
	return out
}
