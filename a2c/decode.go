package a2c

import (
	"fmt"
	"unicode/utf8"

	"github.com/parleyhq/parley/trace"
)

// Decoder decodes one session, one payload line at a time. It reads every mechanism of
// the format whatever options the encoder used; only the dictionary must be the same.
type Decoder struct {
	st       state
	line     int
	buf      []byte
	orig     []byte   // the originals (appendOriginal), reached beyond the session text
	pending  []string // outermost %X strings of the current line
	embDepth int
	prose    bool // every line is a prose line (the header said +t)
}

// NewDecoder starts a session. dict must be the encoder's dictionary when the header
// says one was used (nil otherwise).
func NewDecoder(dict *Dictionary) *Decoder {
	return &Decoder{st: newState(dict), line: 1}
}

// Decode reads one record line (without its newline) and returns the record.
func (d *Decoder) Decode(line string) (trace.Value, error) {
	d.line++
	exp, err := d.expand(line)
	if err != nil {
		return trace.Value{}, err
	}
	r := reader{s: string(exp), d: d}
	var v trace.Value
	if d.prose {
		v, err = r.proseLine()
	} else if len(r.s) > 0 && r.s[0] == '{' {
		v, err = r.value(0)
	} else {
		v, err = r.schemaLine()
	}
	if err == nil && r.pos != len(r.s) {
		err = r.errorf("unexpected %q after the record", r.s[r.pos])
	}
	for _, o := range d.pending {
		d.orig = appendOriginal(d.orig, o)
	}
	d.pending, d.embDepth = d.pending[:0], 0
	return v, err
}

// expand replaces splices by the text they point to and appends the line to the session
// text.
func (d *Decoder) expand(line string) ([]byte, error) {
	base := len(d.st.text)
	t := d.st.text
	for i := 0; i < len(line); {
		c := line[i]
		if c == spliceDot && dotStarts([]byte(line[i+1:min(len(line), i+3)])) {
			if line[i+1] == spliceClose[0] { // .» is a literal .
				t = append(t, c)
				i += 1 + len(spliceClose)
				continue
			}
		} else if (c != spliceOpen && c != spliceLong) || i+1 >= len(line) {
			t = append(t, c)
			i++
			continue
		}
		if c != spliceDot && line[i+1] == c { // ^^ is a literal ^, ?? a literal ?
			t = append(t, c)
			i += 2
			continue
		}
		if c != spliceDot && !isDigit(line[i+1]) { // ^ or ? before anything but a digit is itself
			t = append(t, c)
			i++
			continue
		}
		i++
		// .xd: the length as a letter; ^LLd, or ?LLLd: the length in two digits (three
		// after ?); then the distance; » ends it when needed.
		if c == spliceDot {
			i++
		}
		j := i
		for j < len(line) && j-i < 15 && line[j] >= '0' && line[j] <= '9' {
			j++
		}
		w := 2
		switch c {
		case spliceLong:
			w = 3
		case spliceDot:
			w = 0
		}
		if j-i < w+1 || j-i > w+10 {
			return nil, &SyntaxError{Line: d.line, Offset: i, Msg: "malformed splice: want . and a letter, ^ and a 2-digit length or ? and a 3-digit length, then the distance"}
		}
		length, _ := digits(line[i : i+w])
		if c == spliceDot {
			length = letterLen(line[i-1])
		}
		dist, _ := digits(line[i+w : j])
		i = j
		if i+1 < len(line) && line[i] == spliceClose[0] && line[i+1] == spliceClose[1] {
			i += 2
		}
		src := len(t) - dist
		if dist <= 0 || src < -len(d.orig) || length > 1<<30 {
			return nil, &SyntaxError{Line: d.line, Offset: i, Msg: fmt.Sprintf("splice distance %d outside the session text", dist)}
		}
		for k := 0; k < length; k++ { // byte by byte: a splice may overlap itself
			if src+k < 0 { // in the originals, which come before the session text
				t = append(t, d.orig[len(d.orig)+src+k])
			} else {
				t = append(t, t[src+k])
			}
		}
	}
	d.st.text = append(t, '\n')
	return d.st.text[base : len(d.st.text)-1], nil
}

func digits(s string) (int, int) {
	n, i := 0, 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' && i < 10 {
		n = n*10 + int(s[i]-'0')
		i++
	}
	return n, i
}

// reader parses one expanded line.
type reader struct {
	s   string
	pos int
	d   *Decoder
}

func (r *reader) errorf(format string, args ...any) error {
	return &SyntaxError{Line: r.d.line, Offset: r.pos, Msg: fmt.Sprintf(format, args...)}
}

func (r *reader) schemaLine() (trace.Value, error) {
	st := &r.d.st
	rec := trace.Value{Kind: trace.Object, Members: []trace.Member{}}
	var code byte
	kindKey := ""
	switch {
	case r.pos < len(r.s) && r.s[r.pos] == '~':
		r.pos++
	case r.pos < len(r.s) && r.s[r.pos] == '"':
		k, err := r.quoted()
		if err != nil {
			return rec, err
		}
		kindKey = k
		rec.Members = append(rec.Members, trace.Member{Key: "kind", Value: trace.StringValue(k)})
	case r.pos < len(r.s):
		k, ok := codeKinds[r.s[r.pos]]
		if !ok {
			return rec, r.errorf("unknown kind letter %q", r.s[r.pos])
		}
		code = r.s[r.pos]
		r.pos++
		kindKey = k
		rec.Members = append(rec.Members, trace.Member{Key: "kind", Value: trace.StringValue(k)})
	default:
		return rec, r.errorf("empty record line")
	}
	var got [nSlots]field
	var present [nSlots]bool
	var values, extra []trace.Member
	order := slotOrder(code)
	idx := 0
	for r.pos < len(r.s) {
		if r.s[r.pos] != '|' {
			return rec, r.errorf("expected | between fields")
		}
		r.pos++
		if idx == len(order) {
			// The extra field: other members of the record.
			v, err := r.value(0)
			if err != nil {
				return rec, err
			}
			if v.Kind != trace.Object {
				return rec, r.errorf("the extra field must be an object")
			}
			extra = v.Members
			idx++
			if r.pos < len(r.s) {
				return rec, r.errorf("unexpected text after the extra field")
			}
			break
		}
		s := order[idx]
		idx++
		empty := r.pos == len(r.s) || r.s[r.pos] == '|'
		if empty {
			continue
		}
		present[s] = true
		if isStringSlot(s) {
			if r.s[r.pos] == '~' && (r.pos+1 == len(r.s) || r.s[r.pos+1] == '|') {
				r.pos++
				got[s] = field{}
				continue
			}
			v, err := r.rawString()
			if err != nil {
				return rec, err
			}
			got[s] = field{ok: true, s: v}
			continue
		}
		var v trace.Value
		var err error
		if r.s[r.pos] == '~' { // a raw string
			r.pos++
			var str string
			str, err = r.rawText()
			v = trace.StringValue(str)
		} else {
			v, err = r.value(0)
		}
		if err != nil {
			return rec, err
		}
		values = append(values, trace.Member{Key: slotNames[s], Value: v})
	}
	// Empty string slots take their defaults.
	for s := slotFrom; s <= slotText; s++ {
		if present[s] {
			continue
		}
		switch s {
		case slotFrom:
			got[s] = st.lastFrom[kindKey]
		case slotTo:
			got[s] = st.lastTo[kindKey]
		case slotTool:
			got[s] = st.prevTool
		case slotCall:
			got[s] = st.prevCall
		}
	}
	for s := slotFrom; s <= slotText; s++ {
		if got[s].ok {
			rec.Members = append(rec.Members, trace.Member{Key: slotNames[s], Value: trace.StringValue(got[s].s)})
		}
	}
	// Slots hold the first occurrence of a name; extra holds later duplicates.
	rec.Members = append(rec.Members, values...)
	rec.Members = append(rec.Members, extra...)
	st.lastFrom[kindKey] = got[slotFrom]
	st.lastTo[kindKey] = got[slotTo]
	st.prevTool = got[slotTool]
	st.prevCall = got[slotCall]
	return rec, nil
}

// rawString reads a string slot up to the next unescaped | or the end of the line.
func (r *reader) rawString() (string, error) {
	switch r.s[r.pos] {
	case '$':
		return r.ref()
	case '%':
		v, err := r.embedded()
		return v.Str, err
	case '"':
		s, err := r.quoted()
		if err != nil {
			return "", err
		}
		r.d.st.register(s)
		return s, nil
	}
	return r.rawText()
}

// rawText reads raw text with backslash escapes up to the next unescaped | or the end of
// the line, and numbers it.
func (r *reader) rawText() (string, error) {
	buf := r.d.buf[:0]
	for r.pos < len(r.s) && r.s[r.pos] != '|' {
		c := r.s[r.pos]
		if c != '\\' {
			buf = append(buf, c)
			r.pos++
			continue
		}
		var err error
		buf, err = r.escape(buf, "|~$%\"")
		if err != nil {
			return "", err
		}
	}
	r.d.buf = buf
	s := string(buf)
	r.d.st.register(s)
	return s, nil
}

// escape reads one backslash escape at r.pos and appends what it stands for.
func (r *reader) escape(buf []byte, literal string) ([]byte, error) {
	if r.pos+1 >= len(r.s) {
		return buf, r.errorf("escape at the end of the line")
	}
	c := r.s[r.pos+1]
	r.pos += 2
	switch c {
	case '\\':
		return append(buf, '\\'), nil
	case 'n':
		return append(buf, '\n'), nil
	case 'r':
		return append(buf, '\r'), nil
	case 't':
		return append(buf, '\t'), nil
	case 'b':
		return append(buf, '\b'), nil
	case 'f':
		return append(buf, '\f'), nil
	case 'u':
		u, ok := hex4(r.s, r.pos)
		if !ok {
			return buf, r.errorf("malformed \\u escape")
		}
		r.pos += 4
		if u >= 0xD800 && u < 0xDC00 && r.pos+6 <= len(r.s) && r.s[r.pos] == '\\' && r.s[r.pos+1] == 'u' {
			if u2, ok := hex4(r.s, r.pos+2); ok && u2 >= 0xDC00 && u2 < 0xE000 {
				r.pos += 6
				return utf8.AppendRune(buf, (u-0xD800)<<10|(u2-0xDC00)+0x10000), nil
			}
		}
		if u >= 0xD800 && u < 0xE000 {
			return append(buf, 0xED, byte(0x80|(u>>6)&0x3F), byte(0x80|u&0x3F)), nil
		}
		return utf8.AppendRune(buf, u), nil
	}
	for i := 0; i < len(literal); i++ {
		if literal[i] == c {
			return append(buf, c), nil
		}
	}
	r.pos -= 2
	return buf, r.errorf("unknown escape \\%c", c)
}

func hex4(s string, at int) (rune, bool) {
	if at+4 > len(s) {
		return 0, false
	}
	var v rune
	for i := 0; i < 4; i++ {
		c := s[at+i]
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// quoted reads a string between " or ' (whichever opens it).
func (r *reader) quoted() (string, error) {
	q := r.s[r.pos]
	r.pos++ // opening quote
	buf := r.d.buf[:0]
	for {
		if r.pos >= len(r.s) {
			return "", r.errorf("unterminated string")
		}
		c := r.s[r.pos]
		if c == q {
			r.pos++
			break
		}
		if c != '\\' {
			buf = append(buf, c)
			r.pos++
			continue
		}
		var err error
		buf, err = r.escape(buf, "\"'/")
		if err != nil {
			return "", err
		}
	}
	r.d.buf = buf
	return string(buf), nil
}

func (r *reader) ref() (string, error) {
	r.pos++
	n, k := digits(r.s[r.pos:])
	if k == 0 {
		return "", r.errorf("malformed reference: want $ and a number")
	}
	r.pos += k
	if n >= len(r.d.st.strList) {
		return "", r.errorf("reference $%d to a string not yet seen (%d so far)", n, len(r.d.st.strList))
	}
	return r.d.st.strList[n], nil
}

func (r *reader) embedded() (trace.Value, error) {
	if r.pos+1 >= len(r.s) {
		return trace.Value{}, r.errorf("embedded JSON without a style")
	}
	st := styleByTag(r.s[r.pos+1])
	if st == nil {
		return trace.Value{}, r.errorf("unknown JSON style %q", r.s[r.pos+1])
	}
	r.pos += 2
	cut, n := digits(r.s[r.pos:])
	r.pos += n
	if r.pos >= len(r.s) || (r.s[r.pos] != '{' && r.s[r.pos] != '[') {
		return trace.Value{}, r.errorf("embedded JSON must be an object or an array")
	}
	r.d.embDepth++
	v, err := r.value(0)
	r.d.embDepth--
	if err != nil {
		return trace.Value{}, err
	}
	full := appendStyled(nil, &v, st, 0)
	if cut > len(full) {
		return trace.Value{}, r.errorf("cut of %d bytes from %d bytes of JSON", cut, len(full))
	}
	s := string(full[:len(full)-cut])
	r.d.st.register(s)
	if r.d.embDepth == 0 {
		r.d.pending = append(r.d.pending, s)
	}
	return trace.StringValue(s), nil
}

const maxDepth = 10000

// value reads one value of the compact notation.
func (r *reader) value(depth int) (trace.Value, error) {
	if depth > maxDepth {
		return trace.Value{}, r.errorf("nesting deeper than %d", maxDepth)
	}
	if r.pos >= len(r.s) {
		return trace.Value{}, r.errorf("value expected")
	}
	switch c := r.s[r.pos]; {
	case c == '{':
		r.pos++
		v := trace.Value{Kind: trace.Object, Members: []trace.Member{}}
		if r.pos < len(r.s) && r.s[r.pos] == '}' {
			r.pos++
			return v, nil
		}
		for {
			var k string
			var err error
			if r.pos < len(r.s) && (r.s[r.pos] == '"' || r.s[r.pos] == '\'') {
				k, err = r.quoted()
			} else {
				k, err = r.bare(true)
			}
			if err != nil {
				return v, err
			}
			if r.pos >= len(r.s) || r.s[r.pos] != ':' {
				return v, r.errorf("expected : after a key")
			}
			r.pos++
			m, err := r.value(depth + 1)
			if err != nil {
				return v, err
			}
			v.Members = append(v.Members, trace.Member{Key: k, Value: m})
			if r.pos < len(r.s) && r.s[r.pos] == ',' {
				r.pos++
				continue
			}
			if r.pos < len(r.s) && r.s[r.pos] == '}' {
				r.pos++
				return v, nil
			}
			return v, r.errorf("expected , or } in an object")
		}
	case c == '[':
		r.pos++
		v := trace.Value{Kind: trace.Array, Items: []trace.Value{}}
		if r.pos < len(r.s) && r.s[r.pos] == ']' {
			r.pos++
			return v, nil
		}
		for {
			it, err := r.value(depth + 1)
			if err != nil {
				return v, err
			}
			v.Items = append(v.Items, it)
			if r.pos < len(r.s) && r.s[r.pos] == ',' {
				r.pos++
				continue
			}
			if r.pos < len(r.s) && r.s[r.pos] == ']' {
				r.pos++
				return v, nil
			}
			return v, r.errorf("expected , or ] in an array")
		}
	case c == '"' || c == '\'':
		s, err := r.quoted()
		if err != nil {
			return trace.Value{}, err
		}
		r.d.st.register(s)
		return trace.StringValue(s), nil
	case c == '$':
		s, err := r.ref()
		return trace.StringValue(s), err
	case c == '%':
		return r.embedded()
	case c == '-' || (c >= '0' && c <= '9'):
		n := numberLen(r.s[r.pos:])
		if n == 0 {
			return trace.Value{}, r.errorf("malformed number")
		}
		v := trace.NumberValue(r.s[r.pos : r.pos+n])
		r.pos += n
		return v, nil
	}
	s, err := r.bare(false)
	if err != nil {
		return trace.Value{}, err
	}
	switch s {
	case "true", "false":
		return trace.Value{Kind: trace.Bool, Str: s}, nil
	case "null":
		return trace.NullValue(), nil
	}
	r.d.st.register(s)
	return trace.StringValue(s), nil
}

// bare reads an unquoted key (up to :) or string (up to , } ] | or the end).
func (r *reader) bare(key bool) (string, error) {
	start := r.pos
	for r.pos < len(r.s) {
		c := r.s[r.pos]
		if c == ',' || c == '}' || c == ']' || c == '|' || (key && c == ':') {
			break
		}
		if c == '"' || c == '\\' || c == '{' || c == '[' || c < 0x20 || (r.pos == start && c == '\'') {
			return "", r.errorf("unexpected %q in an unquoted string", c)
		}
		r.pos++
	}
	if r.pos == start {
		return "", r.errorf("value expected")
	}
	return r.s[start:r.pos], nil
}

// numberLen is trace.NumberLen for a string, without copying the rest of the line.
func numberLen(s string) int {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	d := func() int {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - j
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case d() == 0:
		return 0
	}
	if i < len(s) && s[i] == '.' {
		i++
		if d() == 0 {
			return 0
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if d() == 0 {
			return 0
		}
	}
	return i
}
