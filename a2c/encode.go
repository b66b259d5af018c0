package a2c

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parleyhq/parley/trace"
)

// Format constants. They are part of a2c/1: changing one is a new format version.
const (
	// Magic starts every session payload.
	Magic = "a2c/1"
	// refMin is the shortest string (in bytes) that is numbered for $n references.
	refMin = 5
	// spliceOpen starts a splice: « then the length in two digits (00 and three digits
	// for 100 to 999), then the distance. spliceClose ends one only where the next byte would otherwise read as
	// part of the distance (a digit) or as the close; a literal « is written ««.
	spliceOpen  = "«"
	spliceClose = "»"
	// spliceMax is the longest span one splice copies (three digits).
	spliceMax = 999
	hashLen   = 8
	maxChain  = 48
)

// alignContext is how many bytes either side of a splice TokenAligned counts with it: the
// splice must save at least one token in that context. 8 was measured against 4 and 16
// on the toolbench, openai and swe-agent sources with the same result; a margin of one
// token more, or one less, lost on all three.
const alignContext = 8

// kindCodes are the one-letter kinds of a schema line.
var kindCodes = map[string]byte{
	"plan": 'p', "message": 'm', "tool_call": 'c', "tool_result": 'r', "status": 's',
	"artifact": 'a', "review": 'v', "error": 'e', "final": 'f',
}

var codeKinds = func() map[byte]string {
	m := map[byte]string{}
	for k, c := range kindCodes {
		m[c] = k
	}
	return m
}()

// Slots of a schema line. Which fields come first depends on the kind, so the fields a
// kind usually has come before the ones it rarely has and trailing empty fields vanish.
const (
	slotFrom = iota
	slotTo
	slotTool
	slotCall
	slotText
	slotArgs
	slotResult
	slotMeta
	nSlots
)

var slotNames = [nSlots]string{"from", "to", "tool", "call_id", "text", "args", "result", "meta"}

// fieldOrder is the order of the fields after the kind. One order for every kind keeps
// the decode instructions short; a per-kind order saved fewer tokens in the payload
// than it cost to explain.
var fieldOrder = []int{slotFrom, slotTo, slotTool, slotCall, slotText, slotArgs, slotResult, slotMeta}

func slotOrder(byte) []int { return fieldOrder }

func isStringSlot(s int) bool { return s <= slotText }

// field is an optional string: a slot's value or its default.
type field struct {
	ok bool
	s  string
}

// state is what encoder and decoder both derive from the session so far: the session
// text splices point into, the numbered strings, and the defaults of the next line.
type state struct {
	text     []byte
	dictLen  int
	strs     map[string]int
	strList  []string
	lastFrom map[string]field // by kind
	lastTo   map[string]field
	prevTool field
	prevCall field
}

func newState(d *Dictionary) state {
	s := state{strs: map[string]int{}, lastFrom: map[string]field{}, lastTo: map[string]field{}}
	if d != nil && d.Text != "" {
		s.text = append(s.text, d.Text...)
		s.text = append(s.text, '\n')
		s.dictLen = len(s.text)
	}
	return s
}

func (s *state) register(v string) {
	if len(v) < refMin {
		return
	}
	if _, ok := s.strs[v]; ok {
		return
	}
	s.strs[v] = len(s.strList)
	s.strList = append(s.strList, v)
}

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
	Long       bool // a splice of 100 bytes or more
	Doubled    bool // a literal « was written ««
	Originals  bool // a splice copied from the text of a %X string (appendOriginal)
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
	if e.opt.Schema {
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

// appendOriginal adds the text of a %X string to the originals the way a raw string
// field writes it (appendEscaped with |, newlines kept), then a newline, so that a later
// message quoting a tool's JSON can splice it although the payload held it as %X.
func appendOriginal(text []byte, s string) []byte {
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			break
		}
		text = appendEscaped(text, s[:i], '|')
		text = append(text, '\n')
		s = s[i+1:]
	}
	text = appendEscaped(text, s, '|')
	return append(text, '\n')
}

func (e *Encoder) indexOrig() {
	if len(e.orig) == 0 {
		return
	}
	if e.ohead == nil {
		e.ohead = make([]int32, 1<<16)
	}
	for len(e.oprev) < len(e.orig)+1 {
		e.oprev = append(e.oprev, 0)
	}
	for ; e.olate+hashLen <= len(e.orig); e.olate++ {
		h := hash8(e.orig[e.olate:])
		e.oprev[e.olate] = e.ohead[h]
		e.ohead[h] = int32(e.olate + 1)
	}
}

// RecordStart reports whether a payload line starts a record: a kind letter alone or
// before |, or ~, " or { first, or the a2c/1 magic (which starts the next session).
// Any other line continues the text of the record before it.
func RecordStart(line string) bool {
	if line == "" {
		return false
	}
	switch c := line[0]; {
	case c == '~' || c == '"' || c == '{':
		return true
	case codeKinds[c] != "" && (len(line) == 1 || line[1] == '|' || line[1] == '\n'):
		return true
	}
	return strings.HasPrefix(line, Magic)
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

func (e *Encoder) schemaLine(dst []byte, rec *trace.Value) []byte {
	var slots [nSlots]*trace.Value
	var extra []trace.Member
	var kind *trace.Value
	seen := map[string]bool{}
	for i := range rec.Members {
		m := &rec.Members[i]
		first := !seen[m.Key]
		seen[m.Key] = true
		if m.Key == "kind" && first && m.Value.Kind == trace.String {
			kind = &m.Value
			continue
		}
		placed := false
		for s := 0; s < nSlots && first; s++ {
			if slotNames[s] == m.Key && (!isStringSlot(s) || m.Value.Kind == trace.String) {
				slots[s], placed = &m.Value, true
				break
			}
		}
		if !placed {
			if first && (m.Key == "kind" || isSlotName(m.Key)) {
				// The first occurrence has the wrong type: every occurrence of this
				// name goes to extra so that their order is kept.
				seen[m.Key+"\x00extra"] = true
			}
			extra = append(extra, *m)
		}
	}
	// A later duplicate of a name whose first occurrence took a slot stays in extra.
	kindKey := ""
	var code byte
	switch {
	case kind == nil:
		dst = append(dst, '~')
		e.feat.Absent = true
	default:
		kindKey = kind.Str
		if c, ok := kindCodes[kind.Str]; ok {
			code = c
			dst = append(dst, c)
			e.feat.Kinds[c] = true
		} else {
			dst = appendQuotedCVN(dst, kind.Str)
		}
	}
	fields := make([][]byte, 0, nSlots+1)
	for _, s := range slotOrder(code) {
		var f []byte
		switch {
		case isStringSlot(s):
			var def field
			switch s {
			case slotFrom:
				def = e.st.lastFrom[kindKey]
			case slotTo:
				def = e.st.lastTo[kindKey]
			case slotTool:
				def = e.st.prevTool
			case slotCall:
				def = e.st.prevCall
			}
			cur := field{}
			if slots[s] != nil {
				cur = field{ok: true, s: slots[s].Str}
			}
			switch {
			case cur == def:
				if cur.ok {
					e.feat.Defaults = true
				}
			case !cur.ok:
				f = append(f, '~')
				e.feat.Absent = true
			default:
				f = e.rawString(f, cur.s)
			}
		case slots[s] != nil:
			f = e.value(f, slots[s])
		}
		fields = append(fields, f)
	}
	if len(extra) > 0 {
		e.feat.Extra = true
		ev := trace.Value{Kind: trace.Object, Members: extra}
		fields = append(fields, e.value(nil, &ev))
	}
	for len(fields) > 0 && len(fields[len(fields)-1]) == 0 {
		fields = fields[:len(fields)-1]
	}
	for _, f := range fields {
		dst = append(dst, '|')
		dst = append(dst, f...)
	}
	// Defaults for the next line.
	get := func(s int) field {
		if slots[s] == nil {
			return field{}
		}
		return field{ok: true, s: slots[s].Str}
	}
	e.st.lastFrom[kindKey] = get(slotFrom)
	e.st.lastTo[kindKey] = get(slotTo)
	e.st.prevTool = get(slotTool)
	e.st.prevCall = get(slotCall)
	return dst
}

func isSlotName(k string) bool {
	for _, n := range slotNames {
		if n == k {
			return true
		}
	}
	return false
}

// rawString writes a string slot: its text with backslash escapes, up to the next |.
func (e *Encoder) rawString(dst []byte, s string) []byte {
	if ref, ok := e.refFor(s, func() int { return e.count(s) }); ok {
		e.feat.ValueRefs = true
		return append(dst, ref...)
	}
	if e.opt.Embedded {
		if v, st, cut, ok := detectEmbedded(s, e.buf); ok {
			if out, ok := e.tryEmbedded(dst, s, &v, st, cut, func() int { return e.count(s) }); ok {
				return out
			}
		}
	}
	if s == "" {
		e.st.register(s)
		return append(dst, `""`...)
	}
	switch s[0] {
	case '~', '$', '%', '"':
		dst = append(dst, '\\')
		e.feat.RawEscapes = true
	}
	start, full := len(dst), s
	if e.opt.RawNewlines {
		// Newlines stay newlines (a model reads them as one token where \n costs two);
		// fixNewlines escapes the few that would look like the start of a record.
		for {
			i := strings.IndexByte(s, '\n')
			if i < 0 {
				break
			}
			dst = appendEscaped(dst, s[:i], '|')
			dst = append(dst, '\n')
			e.feat.Newlines = true
			s = s[i+1:]
		}
	}
	dst = appendEscaped(dst, s, '|')
	if len(dst)-start != len(full) {
		e.feat.RawEscapes = true
	}
	e.st.register(full)
	return dst
}

// appendEscaped writes s with backslash escapes for \, the quote byte q, line breaks,
// tabs, other control characters, U+2028/U+2029 and lone surrogates.
func appendEscaped(dst []byte, s string, q byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x80 {
			switch {
			case c == '\\' || c == q:
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c == '\b':
				dst = append(dst, '\\', 'b')
			case c == '\f':
				dst = append(dst, '\\', 'f')
			case c < 0x20 || c == 0x7f:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		if r, ok := trace.Surrogate(s, i); ok {
			dst = appendU4(dst, r)
			i += 3
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			dst = append(dst, "\uFFFD"...)
		case r == '\u2028' || r == '\u2029' || r < 0xA0: // and the C1 controls: the payload stays printable
			dst = appendU4(dst, r)
		default:
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return dst
}

func appendQuotedCVN(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = appendEscaped(dst, s, '"')
	return append(dst, '"')
}

// value writes a JSON value in the compact value notation.
func (e *Encoder) value(dst []byte, v *trace.Value) []byte {
	switch v.Kind {
	case trace.Null:
		return append(dst, "null"...)
	case trace.Bool, trace.Number:
		return append(dst, v.Str...)
	case trace.String:
		return e.str(dst, v.Str)
	case trace.Array:
		dst = append(dst, '[')
		for i := range v.Items {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = e.value(dst, &v.Items[i])
		}
		return append(dst, ']')
	case trace.Object:
		dst = append(dst, '{')
		for i := range v.Members {
			if i > 0 {
				dst = append(dst, ',')
			}
			k := v.Members[i].Key
			if e.opt.Bare && bareKey(k) {
				e.feat.Bare = true
				dst = append(dst, k...)
			} else {
				dst = appendQuotedCVN(dst, k)
			}
			dst = append(dst, ':')
			dst = e.value(dst, &v.Members[i].Value)
		}
		return append(dst, '}')
	}
	return dst
}

func (e *Encoder) str(dst []byte, s string) []byte {
	bare := e.opt.Bare && bareValue(s)
	if ref, ok := e.refFor(s, func() int {
		if bare {
			return e.count(s)
		}
		return e.count(`"` + s + `"`)
	}); ok {
		e.feat.ValueRefs = true
		return append(dst, ref...)
	}
	if e.opt.Embedded {
		if v, st, cut, ok := detectEmbedded(s, e.buf); ok {
			if out, ok := e.tryEmbedded(dst, s, &v, st, cut, func() int { return e.count(`"` + s + `"`) }); ok {
				return out
			}
		}
	}
	switch {
	case bare:
		e.feat.Bare = true
		dst = append(dst, s...)
	case e.opt.Bare && strings.Count(s, `"`) > strings.Count(s, "'"):
		// Text full of double quotes (JSON cut short, HTML) reads and tokenizes better
		// between single quotes than with every " escaped.
		e.feat.Quotes = true
		dst = append(dst, '\'')
		dst = appendEscaped(dst, s, '\'')
		dst = append(dst, '\'')
	default:
		dst = appendQuotedCVN(dst, s)
	}
	e.st.register(s)
	return dst
}

// tryEmbedded writes a string that holds JSON as %X, the cut if any, and the value. With
// TokenAligned it first checks that this costs fewer tokens than the string as text, and
// if not, undoes what writing it did (strings numbered, features noted) and reports false.
func (e *Encoder) tryEmbedded(dst []byte, s string, v *trace.Value, st *style, cut int, literalCost func() int) ([]byte, bool) {
	savedFeat, savedStyles, savedStrs := e.feat, maps.Clone(e.feat.Styles), len(e.st.strList)
	start := len(dst)
	dst = append(dst, '%', st.tag)
	if cut > 0 {
		dst = strconv.AppendInt(dst, int64(cut), 10)
	}
	e.embDepth++
	dst = e.value(dst, v)
	e.embDepth--
	if e.opt.TokenAligned && e.opt.Counter != nil && e.opt.Counter.Count(string(dst[start:])) >= literalCost() {
		e.feat = savedFeat
		e.feat.Styles = savedStyles
		for _, x := range e.st.strList[savedStrs:] {
			delete(e.st.strs, x)
		}
		e.st.strList = e.st.strList[:savedStrs]
		return dst[:start], false
	}
	e.feat.Styles[st.tag] = true
	if cut > 0 {
		e.feat.Cut = true
	}
	e.st.register(s)
	if e.embDepth == 0 {
		e.pending = append(e.pending, s)
	}
	return dst, true
}

// bareKey reports whether an object key can go without quotes: it cannot be mistaken
// for the structure around it.
func bareKey(k string) bool {
	if k == "" || k[0] == ' ' || k[len(k)-1] == ' ' || k[0] == '"' || k[0] == '\'' {
		return false
	}
	for i := 0; i < len(k); i++ {
		switch c := k[i]; {
		case c < 0x20 || c == 0x7f:
			return false
		case c == '"' || c == '\\' || c == ',' || c == ':' || c == '{' || c == '}' || c == '[' || c == ']' || c == '|':
			return false
		case c >= 0x80:
			if _, ok := trace.Surrogate(k, i); ok {
				return false
			}
			r, n := utf8.DecodeRuneInString(k[i:])
			if (r == utf8.RuneError && n == 1) || r == '\u2028' || r == '\u2029' || r < 0xA0 {
				return false
			}
		}
	}
	return true
}

// bareValue reports whether a string value can go without quotes: a bare key that does
// not start like another value (number, reference, embedded JSON, absent marker) and is
// not a JSON keyword.
func bareValue(s string) bool {
	if !bareKey(s) {
		return false
	}
	switch c := s[0]; {
	case c == '-' || (c >= '0' && c <= '9') || c == '$' || c == '%' || c == '~':
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			return false
		}
	}
	return s != "true" && s != "false" && s != "null"
}

// splice appends line to the session text and returns its payload form: spans that
// occurred before are replaced by splice markers (spliceMarker), a literal « is doubled.
func (e *Encoder) splice(line []byte) []byte {
	base := len(e.st.text)
	e.st.text = append(e.st.text, line...)
	end := len(e.st.text)
	e.index(0, base) // the tail of the previous line can be hashed now
	out := e.out[:0]
	text := e.st.text
	lit := base
	// The first two bytes of a record stay literal: they are what marks a line as the
	// start of a record (RecordStart).
	p := min(base+2, end)
	for p < end {
		bestLen, bestSrc := 0, 0
		if e.opt.Splices {
			bestLen, bestSrc = e.longest(p, end, true)
			if !e.feat.Originals && bestSrc < 0 {
				// The first splice into the originals must pay for the sentence that
				// explains them, over the best splice without them; until one does,
				// they stay out of reach.
				if e.mainCost(p, p+bestLen)-4 < e.count(originalsNote) {
					bestLen, bestSrc = e.longest(p, end, false)
				}
			}
		}
		if bestLen >= e.opt.minSplice() && p+1 < end {
			// Lazy matching: when the next byte starts a clearly longer match, this
			// byte goes out literally and the longer match wins.
			e.index(p, p+1)
			if next, _ := e.longest(p+1, end, e.feat.Originals); next > bestLen+lazyMargin {
				p++
				continue
			}
		}
		if bestLen >= e.opt.minSplice() {
			ps, pe := p, p+bestLen
			// Splices start and end on character boundaries so that every literal
			// stays valid UTF-8. (Moving them to word boundaries as well was measured
			// and lost: the bytes it gives up cost more than the cleaner edges save.)
			for ps < pe && !utf8.RuneStart(text[ps]) {
				ps++
			}
			for pe > ps && pe < end && !utf8.RuneStart(text[pe]) {
				pe--
			}
			if pe-ps >= e.opt.minSplice() && ps < pe {
				src := bestSrc + (ps - p)
				marker := spliceMarker(ps-src, pe-ps)
				closed := pe < end && needsClose(text[pe:end])
				if closed {
					marker += spliceClose
				}
				keep := true
				if e.opt.TokenAligned && e.opt.Counter != nil {
					// Count in context: a few bytes either side decide how the
					// literal's edges merge with their neighbours.
					l, r := max(base, ps-alignContext), min(end, pe+alignContext)
					for l > base && !utf8.RuneStart(text[l]) {
						l--
					}
					for r < end && !utf8.RuneStart(text[r]) {
						r++
					}
					left, right := string(text[l:ps]), string(text[pe:r])
					keep = e.opt.Counter.Count(left+marker+right) < e.opt.Counter.Count(left+string(text[ps:pe])+right)
				}
				if keep {
					out = e.appendLiteral(out, text[lit:ps])
					out = append(out, marker...)
					e.feat.Splices = true
					e.feat.Close = e.feat.Close || closed
					e.feat.Long = e.feat.Long || pe-ps >= 100
					if src < 0 {
						e.feat.Originals = true
					} else if src < e.st.dictLen {
						e.feat.Dictionary = true
					}
					e.index(p, pe)
					p, lit = pe, pe
					continue
				}
			}
		}
		e.index(p, p+1)
		p++
	}
	out = e.appendLiteral(out, text[lit:end])
	e.st.text = append(e.st.text, '\n')
	e.index(end, end+1)
	e.out = out
	return out
}

// longest returns the longest earlier match for the text at p (within the line).
// A match in the originals is returned with a negative source: its offset from their end.
// orig false leaves the originals out.
func (e *Encoder) longest(p, end int, orig bool) (int, int) {
	text := e.st.text
	bestLen, bestSrc := 0, 0
	if p+hashLen > end {
		return 0, 0
	}
	h := hash8(text[p:])
	for q, n := int(e.head[h])-1, 0; q >= 0 && n < maxChain; q, n = int(e.prev[q])-1, n+1 {
		if q >= p {
			continue
		}
		m := 0
		for p+m < end && m < spliceMax && text[q+m] == text[p+m] {
			m++
		}
		if m > bestLen {
			bestLen, bestSrc = m, q
			if m == spliceMax {
				break
			}
		}
	}
	if !orig || bestLen == spliceMax || e.ohead == nil {
		return bestLen, bestSrc
	}
	o := e.orig
	for q, n := int(e.ohead[h])-1, 0; q >= 0 && n < maxChain; q, n = int(e.oprev[q])-1, n+1 {
		m := 0
		for p+m < end && q+m < len(o) && m < spliceMax && o[q+m] == text[p+m] {
			m++
		}
		if m > bestLen {
			bestLen, bestSrc = m, q-len(o)
			if m == spliceMax {
				break
			}
		}
	}
	return bestLen, bestSrc
}

// mainCost estimates the tokens of text[p:q] written without the originals: greedy
// splices (about 4 tokens each) and literals between them.
func (e *Encoder) mainCost(p, q int) int {
	text := e.st.text
	cost, lit := 0, p
	for x := p; x < q; {
		if l, _ := e.longest(x, q, false); l >= e.opt.minSplice() {
			cost += e.count(string(text[lit:x])) + 4
			x += l
			lit = x
			continue
		}
		x++
	}
	return cost + e.count(string(text[lit:q]))
}

// lazyMargin: a match at the next byte must be this many bytes longer to be preferred.
// Lazy matching gains about 0.1 point on every corpus source; margins of 0 to 4 bytes
// measured the same.
const lazyMargin = 1

// spliceMarker writes «, the length in two digits (or 00 and three digits from 100 on)
// and the distance, with no close: a tokenizer reads the digits in groups of three, so
// the marker costs « and one token per three digits.
func spliceMarker(dist, n int) string {
	b := make([]byte, 0, 16)
	b = append(b, spliceOpen...)
	if n >= 100 {
		b = append(b, '0', '0', byte('0'+n/100))
	}
	b = append(b, byte('0'+n/10%10), byte('0'+n%10))
	b = strconv.AppendInt(b, int64(dist), 10)
	return string(b)
}

// needsClose reports whether the text after a splice needs » first: it starts with a
// digit (which would read as distance) or with » itself.
func needsClose(next []byte) bool {
	if len(next) == 0 {
		return false
	}
	return (next[0] >= '0' && next[0] <= '9') || (len(next) > 1 && next[0] == spliceClose[0] && next[1] == spliceClose[1])
}

// appendLiteral writes text that is not spliced, a « doubled.
func (e *Encoder) appendLiteral(dst, lit []byte) []byte {
	for i := 0; i < len(lit); i++ {
		if lit[i] == spliceOpen[0] && i+1 < len(lit) && lit[i+1] == spliceOpen[1] {
			e.feat.Doubled = true
			dst = append(dst, spliceOpen...)
			dst = append(dst, spliceOpen...)
			i++
			continue
		}
		dst = append(dst, lit[i])
	}
	return dst
}

func hash8(b []byte) uint32 {
	x := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
	return uint32((x * 0x9E3779B97F4A7C15) >> 48)
}

// index adds every position before to (that can be hashed yet) to the match finder.
// Positions are added in order; e.late is the first one not added. A position is added
// only after it has been looked up, so a span never matches itself at distance 0.
func (e *Encoder) index(_, to int) {
	t := e.st.text
	for len(e.prev) < len(t)+1 {
		e.prev = append(e.prev, 0)
	}
	for p := e.late; p < to; p++ {
		if p+hashLen > len(t) {
			return
		}
		h := hash8(t[p:])
		e.prev[p] = e.head[h]
		e.head[h] = int32(p + 1)
		e.late = p + 1
	}
}

// SyntaxError is a payload the decoder cannot read, with its line (1 = the header) and
// the byte offset in the expanded line.
type SyntaxError struct {
	Line   int
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("a2c: line %d, byte %d: %s", e.Line, e.Offset, e.Msg)
}
