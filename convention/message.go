package convention

import (
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/parleyhq/parley/diag"
)

// Version is the only convention version this package reads.
const Version = "v1"

// Intents are the header intents the convention names. Others parse, and Lint warns on them.
var Intents = []string{"request", "report", "propose", "decide", "answer", "note"}

// Reserved lists the reserved first words. A line starting with one of them means exactly that
// word's modality; every other first word starts a plain fact.
var Reserved = []string{
	"req", "ask", "must-not", "may", "done", "ev", "claim", "plan", "todo", "block",
	"opt", "rec", "default", "risk", "mit", "deadline", "decider", "unknown",
}

var reservedSet = func() map[string]bool {
	m := make(map[string]bool, len(Reserved))
	for _, w := range Reserved {
		m[w] = true
	}
	return m
}()

// IsReserved reports whether w is a reserved first word (case-sensitive: `Done` is not).
func IsReserved(w string) bool { return reservedSet[w] }

// Header is the first line of a message.
type Header struct {
	Version string   // "v1"
	Intent  string   // request, report, propose, decide, answer, note, …
	Topic   string   // a legible word id, also the task the state record is kept for
	To      []string // addressees; may contain "all"
	Re      int64    // the seq this message answers; 0 when absent
	N       int      // declared fact-line count; -1 when absent
}

// Line is one fact line.
type Line struct {
	Num      int    // 1-based line number in the message (header is line 1)
	Word     string // first word without its #k or /label suffix, e.g. "done", "ev", "opt", "outcome"
	Key      string // the k of done#k / ev#k, or the label of opt/A; "" if none
	Mark     string // "#" or "/", the character written before Key; "" when Key is ""
	Text     string // the rest of the line after the first word, trimmed
	Raw      string // the line exactly as written, without its line ending
	Reserved bool   // Word is a reserved modality word

	col     int // 1-based byte column of the first word in Raw; 0 for built lines
	textCol int // 1-based byte column of Text in Raw; 0 for built lines
}

// Message is a parsed message: its header and its fact lines. Blank lines are not fact lines
// and are not kept.
type Message struct {
	Header Header
	Lines  []Line

	pos         headerPos // where the header's parts were written; zero for built messages
	laterHeader int       // a line below the first that looks like a header, when the first does not

	// Where Parse keeps Header.To and pos.seats for the one or two addressees of nearly every
	// message, in the message's own allocation (parseSeats).
	toBuf    [2]string
	seatsBuf [2]int
}

// headerPos remembers where each part of the header was written, so that diagnostics found
// after parsing (by Validate and Lint) can point at a column.
type headerPos struct {
	line      int // 1-based line number of the header
	raw       string
	version   int
	intent    int
	topic     int
	to        int   // column of the word "to"
	seats     []int // column of each addressee, parallel to Header.To
	re        int
	reHash    bool // `re #12` was written; the # is noise
	n         int
	end       int // column just past the last header token
	broken    bool
	stray     string // a word after the topic when no `to` was written: probably the addressee
	strayCol  int
	blank     []int // line numbers of blank lines between fact lines
	crlf      bool  // some line ended in \r\n
	numLines  int   // lines in the source, blank ones included
	lastBlank bool
}

// Diagnostic is one finding about a message (package diag's, which the room server and the
// AACP parser share). Line and Col are 1-based; Col counts bytes.
type Diagnostic = diag.Diagnostic

// Severities.
const (
	SeverityError   = diag.SeverityError
	SeverityWarning = diag.SeverityWarning
)

// Options configure Validate and Lint.
type Options struct {
	// Roster is the set of seats in the room. When non-nil, an addressee who is not in it is
	// an error. "all" is always allowed.
	Roster []string
	// Counter counts the tokens that Lint's cost figures quote ("costs 4 tokens"), in
	// TokenEncoding. Nil estimates about four bytes a token; pass a *bpe.Encoding of
	// TokenEncoding for the exact figures.
	Counter Counter
}

// Looks reports whether the first non-blank line of src looks like a convention header: a
// version word such as v1 followed by a `to` or an `n=` on the same line. It is how a room or
// the linter tells a convention message from AACP or plain text before parsing it.
func Looks(src string) bool {
	var buf [16]tok // a header's words, on the stack: every post is looked at here
	return looksTokens(appendTokensTo(buf[:0], firstLine(src)))
}

// looksTokens is Looks on the tokens of a line.
func looksTokens(toks []tok) bool {
	if len(toks) < 2 || !looksVersion(toks[0].s) {
		return false
	}
	for _, t := range toks[1:] {
		if t.s == "to" || strings.HasPrefix(t.s, "n=") {
			return true
		}
	}
	return false
}

// HeaderLine returns the 1-based number of the first line of src that looks like a
// convention header, or 0 when none does. A message whose header is not its first line (a
// greeting above it, a code fence around it) is still meant as a convention message, and
// the linter says so instead of treating it as prose.
func HeaderLine(src string) int {
	for i, line := range strings.Split(src, "\n") {
		if Looks(line) {
			return i + 1
		}
	}
	return 0
}

func firstLine(src string) string {
	for len(src) > 0 {
		line, rest, _ := strings.Cut(src, "\n")
		if strings.TrimSpace(line) != "" {
			return line
		}
		src = rest
	}
	return ""
}

func looksVersion(s string) bool {
	if len(s) < 2 || (s[0] != 'v' && s[0] != 'V') {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// tok is a whitespace-delimited token and its 1-based byte column.
type tok struct {
	s   string
	col int
}

// tokens splits s on Unicode white space, keeping each token's column.
func tokens(s string) []tok { return appendTokens(nil, s) }

// appendTokens appends the tokens of s to dst: a linter reuses one slice line after line.
func appendTokens(dst []tok, s string) []tok {
	if dst != nil {
		return appendTokensTo(dst, s)
	}
	// Counted first, so that the slice is allocated once: every line of every post is
	// split here, several times.
	n, in := 0, false
	for i := 0; i < len(s); {
		sp, size := false, 1
		if c := s[i]; c < utf8.RuneSelf { // spaceAt's ASCII case, inline
			sp = asciiSpace[c]
		} else {
			sp, size = spaceAt(s, i)
		}
		if sp == in {
			if !sp {
				n++
			}
			in = !sp
		}
		i += size
	}
	if n == 0 {
		return nil
	}
	return appendTokensTo(make([]tok, 0, n), s)
}

func appendTokensTo(out []tok, s string) []tok {
	// Two tight loops, over the spaces and then over the token, each looking a byte up in one
	// table: the lines of every post are split here several times.
	for i := 0; i < len(s); {
		switch byteClass[s[i]] {
		case classSpace:
			i++
			continue
		case classOther:
			sp, size := spaceAt(s, i)
			if sp {
				i += size
				continue
			}
		}
		start := i
		for i < len(s) {
			c := byteClass[s[i]]
			if c == classWord {
				i++
				continue
			}
			if c == classSpace {
				break
			}
			sp, size := spaceAt(s, i)
			if sp {
				break
			}
			i += size
		}
		out = append(out, tok{s[start:i], start + 1})
	}
	return out
}

// byteClass sorts the bytes for appendTokensTo: an ASCII byte that is part of a word, an
// ASCII space (asciiSpace), or a byte outside ASCII, whose rune spaceAt decodes.
var byteClass = func() (c [256]uint8) {
	for b := range c {
		switch {
		case b >= utf8.RuneSelf:
			c[b] = classOther
		case asciiSpace[b]:
			c[b] = classSpace
		}
	}
	return c
}()

const (
	classWord = iota
	classSpace
	classOther
)

// firstToken is tokens(s)[0], if s has a token, found without splitting the rest.
func firstToken(s string) (tok, bool) {
	start := -1
	for i := 0; i < len(s); {
		sp, size := false, 1
		if c := s[i]; c < utf8.RuneSelf { // spaceAt's ASCII case, inline
			sp = asciiSpace[c]
		} else {
			sp, size = spaceAt(s, i)
		}
		switch {
		case sp && start >= 0:
			return tok{s[start:i], start + 1}, true
		case !sp && start < 0:
			start = i
		}
		i += size
	}
	if start >= 0 {
		return tok{s[start:], start + 1}, true
	}
	return tok{}, false
}

// spaceAt reports whether the character at s[i] is white space (unicode.IsSpace), and its
// size in bytes; ASCII, nearly every character of a message, is judged without decoding.
func spaceAt(s string, i int) (bool, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return asciiSpace[c], 1
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	return unicode.IsSpace(r), size
}

// asciiSpace is unicode.IsSpace on ASCII: \t, \n, \v, \f, \r and the space.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// Parse reads src into a message. The diagnostics it returns are errors about the form of the
// message (an empty message, a malformed header); Validate and Lint find the rest. Parse never
// fails outright: the returned message holds whatever could be read, so that a caller can still
// report on it.
func Parse(src string) (*Message, []Diagnostic) {
	m := &Message{Header: Header{N: -1}}
	var diags []Diagnostic
	if !utf8.ValidString(src) {
		diags = append(diags, Diagnostic{Line: 1, Col: 1, Severity: SeverityError, Code: "utf8",
			Message: "the message is not valid UTF-8"})
		src = strings.ToValidUTF8(src, "\uFFFD")
	}
	src = strings.TrimPrefix(src, "\uFEFF")
	var buf [32]string // the lines of most messages, on the stack
	lines := buf[:0]
	for l := range strings.SplitSeq(src, "\n") {
		lines = append(lines, l)
	}
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	m.pos.numLines = len(lines)
	headerAt := -1
	for i, l := range lines {
		if strings.HasSuffix(l, "\r") {
			m.pos.crlf = true
			lines[i] = strings.TrimSuffix(l, "\r")
		}
		if headerAt < 0 && strings.TrimSpace(lines[i]) != "" {
			headerAt = i
		}
	}
	if headerAt < 0 {
		m.pos.broken = true
		diags = append(diags, Diagnostic{Line: 1, Col: 1, Severity: SeverityError, Code: "empty",
			Message: "the message is empty",
			Fix:     "start with the header: v1 <intent> <topic> to <seat> n=<fact lines>"})
		return m, diags
	}
	m.pos.line = headerAt + 1
	// The header's tokens, split once for both the look and the parse (on the stack for
	// nearly every header).
	var hbuf [16]tok
	htoks := appendTokensTo(hbuf[:0], lines[headerAt])
	if !looksTokens(htoks) { // Looks(lines[headerAt]): the line is not blank
		m.laterHeader = HeaderLine(src)
	}
	diags = append(diags, m.parseHeader(lines[headerAt], htoks)...)
	pendingBlank := []int(nil)
	m.Lines = make([]Line, 0, len(lines)-headerAt-1) // at most one a line, allocated once
	for i := headerAt + 1; i < len(lines); i++ {
		raw := lines[i]
		if strings.TrimSpace(raw) == "" {
			pendingBlank = append(pendingBlank, i+1)
			continue
		}
		m.pos.blank = append(m.pos.blank, pendingBlank...)
		pendingBlank = nil
		m.Lines = append(m.Lines, parseLine(i+1, raw))
	}
	if len(m.Lines) == 0 {
		m.Lines = nil // as before: a message without fact lines has none
	}
	m.pos.lastBlank = len(pendingBlank) > 0
	return m, diags
}

// parseLine splits one fact line into its first word (with an optional #k or /label suffix
// on a reserved word) and its text.
func parseLine(num int, raw string) Line {
	l := Line{Num: num, Raw: raw}
	first, ok := firstToken(raw)
	if !ok {
		return l
	}
	l.col = first.col
	word := first.s
	if i := markAt(word); i > 0 && reservedSet[word[:i]] && validKey(word[i+1:]) {
		l.Word, l.Mark, l.Key = word[:i], word[i:i+1], word[i+1:]
	} else {
		l.Word = word
	}
	l.Reserved = reservedSet[l.Word]
	rest := raw[first.col-1+len(first.s):]
	trimmed := rest[skipSpace(rest):]
	l.Text = trimSpaceRight(trimmed)
	if l.Text != "" {
		l.textCol = len(raw) - len(trimmed) + 1
	}
	return l
}

// markAt is strings.IndexAny(word, "#/"), byte by byte: both are ASCII, and no byte of a
// character outside ASCII is.
func markAt(word string) int {
	for i := 0; i < len(word); i++ {
		if word[i] == '#' || word[i] == '/' {
			return i
		}
	}
	return -1
}

// skipSpace returns how many bytes of white space (unicode.IsSpace) s starts with,
// strings.TrimLeftFunc(s, unicode.IsSpace)'s cut, judging ASCII a byte at a time.
func skipSpace(s string) int {
	i := 0
	for i < len(s) && s[i] < utf8.RuneSelf && asciiSpace[s[i]] {
		i++
	}
	if i < len(s) && s[i] >= utf8.RuneSelf {
		return len(s) - len(strings.TrimLeftFunc(s[i:], unicode.IsSpace))
	}
	return i
}

// trimSpaceRight is strings.TrimRightFunc(s, unicode.IsSpace), judging ASCII a byte at a
// time.
func trimSpaceRight(s string) string {
	for len(s) > 0 && s[len(s)-1] < utf8.RuneSelf && asciiSpace[s[len(s)-1]] {
		s = s[:len(s)-1]
	}
	if len(s) > 0 && s[len(s)-1] >= utf8.RuneSelf {
		return strings.TrimRightFunc(s, unicode.IsSpace)
	}
	return s
}

// validKey reports whether k can follow done# / ev# / opt/: a short run of letters, digits,
// '.', '_' or '-'.
func validKey(k string) bool {
	if k == "" || len(k) > 32 {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// validSeat reports whether s can name a seat: letters, digits, '.', '_' and '-', starting
// with a letter or digit.
func validSeat(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i, r := range s {
		ok := unicode.IsLetter(r) || unicode.IsDigit(r) || (i > 0 && (r == '.' || r == '_' || r == '-'))
		if !ok {
			return false
		}
	}
	return true
}

// parseHeader reads `v1 <intent> <topic> to <seat>[,<seat>…] [re <seq>] n=<count>`.
func (m *Message) parseHeader(raw string, toks []tok) []Diagnostic {
	h := &m.Header
	p := &m.pos
	p.raw = raw
	var diags []Diagnostic
	errAt := func(col int, code, msg, fix string) {
		diags = append(diags, Diagnostic{Line: p.line, Col: col, Severity: SeverityError, Code: code, Message: msg, Fix: fix})
	}
	// toks are raw's tokens (Parse splits the header once), which parseHeader may change.
	if len(toks) > 0 {
		last := toks[len(toks)-1]
		p.end = last.col + len(last.s)
	}
	v := toks[0]
	switch {
	case looksVersion(v.s) && v.s[0] == 'v':
		h.Version, p.version = v.s, v.col
	case looksVersion(v.s):
		h.Version, p.version = strings.ToLower(v.s), v.col
		errAt(v.col, "header", "the version is written in lower case: "+strings.ToLower(v.s), replaceAt(raw, v.col, v.s, strings.ToLower(v.s)))
	default:
		p.broken = true
		msg := "the first line is not a header: it must start with the version v1"
		if n := m.laterHeader; n > 0 {
			msg = "the header must be the first line: line " + strconv.Itoa(n) + " looks like it, and the text above it is not part of any fact"
		}
		errAt(v.col, "header", msg, "v1 <intent> <topic> to <seat> n=<fact lines>")
		return diags
	}

	// The words before `to`: intent and topic.
	i := 1
	var wbuf [4]tok
	words := wbuf[:0] // intent and topic, and rarely more
	for ; i < len(toks); i++ {
		s := toks[i].s
		if s == "to" || s == "re" || isNToken(s) {
			break
		}
		if s == "to:" || s == "To" || s == "TO" || strings.HasPrefix(s, "to:") || strings.HasPrefix(s, "to=") {
			// `to: lead`, `to=lead`: the addressing is there, written another way.
			rest := strings.TrimLeft(s[2:], ":=")
			fixed := "to " + rest
			if rest == "" {
				fixed = "to"
			}
			p.broken = true
			errAt(toks[i].col, "header", "addressees follow the word to and a space, not "+quote(s), replaceAt(raw, toks[i].col, s, fixed))
			toks[i].s = "to"
			if rest != "" {
				toks = slices.Insert(toks, i+1, tok{rest, toks[i].col + len(s) - len(rest)})
			}
			break
		}
		words = append(words, toks[i])
	}
	hasTo := false
	for _, t := range toks[i:] {
		hasTo = hasTo || t.s == "to"
	}
	if len(words) >= 1 {
		h.Intent, p.intent = words[0].s, words[0].col
	}
	if len(words) >= 2 {
		h.Topic, p.topic = words[1].s, words[1].col
	}
	switch {
	case len(words) == 0:
		p.broken = true
		errAt(v.col+len(v.s)+1, "header", "the header has no intent and no topic: write them after the version",
			"v1 <intent> <topic> to <seat> n=<fact lines>")
	case len(words) == 1:
		p.broken = true
		errAt(words[0].col+len(words[0].s)+1, "header", "the header has an intent ("+words[0].s+") but no topic: name the task with a word, e.g. limiter", "")
	case len(words) > 2 && !hasTo && len(words) == 3:
		// `v1 report limiter lead n=9`: the third word is probably the addressee whose `to`
		// is missing. Validate reports the missing `to` with this word in its fix.
		p.stray, p.strayCol = words[2].s, words[2].col
	case len(words) > 2:
		p.broken = true
		w := words[2]
		errAt(w.col, "header", "unexpected "+quote(w.s)+" after the topic: the header is v1 <intent> <topic> to <seat> n=<fact lines>", "")
	}

	// Addressees, then re and n in either order. `to` is accepted after n= too, since the
	// parts can only be read one way.
	for i < len(toks) {
		t := toks[i]
		switch {
		case t.s == "to":
			if p.to != 0 {
				errAt(t.col, "header", "the header has two to: list every addressee after one to, comma-separated", "")
				p.broken = true
				i++
				continue
			}
			p.to = t.col
			i++
			from := i
			for ; i < len(toks); i++ {
				s := toks[i].s
				if s == "re" || isNToken(s) {
					break
				}
			}
			diags = append(diags, m.parseSeats(toks[from:i:i])...)
			continue
		case t.s == "re":
			i++
			if p.re != 0 {
				errAt(t.col, "header", "the header has two re", "")
				p.broken = true
				continue
			}
			p.re = t.col
			if i >= len(toks) {
				p.broken = true
				errAt(t.col, "header", "re needs the seq of the message it answers, e.g. re 12", "")
				continue
			}
			val := toks[i].s
			if strings.HasPrefix(val, "#") {
				p.reHash = true
				val = val[1:]
			}
			seq, err := strconv.ParseInt(val, 10, 64)
			if err != nil || seq <= 0 || !allDigits(val) {
				p.broken = true
				errAt(toks[i].col, "header", "re takes the seq of the message it answers, a positive whole number, not "+quote(toks[i].s), "")
			} else {
				h.Re = seq
			}
			i++
		case strings.HasPrefix(t.s, "n=") && allDigits(t.s[2:]):
			i++
			if p.n != 0 {
				p.broken = true
				errAt(t.col, "header", "the header has two n=", "")
				continue
			}
			p.n = t.col
			n, err := strconv.Atoi(t.s[2:])
			if err != nil {
				p.broken = true
				errAt(t.col, "header", "n= is too large: "+quote(t.s), "")
				continue
			}
			h.N = n
		case isNToken(t.s):
			p.broken = true
			p.n = t.col
			fix := ""
			if k, ok := looseN(toks[i:]); ok {
				fix = replaceTail(raw, t.col, "n="+strconv.Itoa(k))
			}
			errAt(t.col, "header", "the fact-line count is written n=<count>, a whole number with no spaces: not "+quote(joinToks(toks[i:])), fix)
			return diags
		default:
			p.broken = true
			errAt(t.col, "header", "unexpected "+quote(t.s)+" in the header: after the topic come to <seat>, then re <seq> and n=<count>", "")
			i++
		}
	}
	return diags
}

// isNToken reports whether s starts a fact-line count written some way: `n=9`, `n`, `N=9`,
// `n:9`, `n=`.
func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func joinToks(ts []tok) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.s
	}
	return strings.Join(parts, " ")
}

// replaceTail returns raw with everything from 1-based column col on replaced by s.
func replaceTail(raw string, col int, s string) string {
	if col-1 > len(raw) {
		return raw + " " + s
	}
	return raw[:col-1] + s
}

func isNToken(s string) bool {
	if s == "n" || s == "N" {
		return true
	}
	if len(s) >= 2 && (s[0] == 'n' || s[0] == 'N') && (s[1] == '=' || s[1] == ':') {
		return true
	}
	return false
}

// looseN reads a count written loosely (`n = 9`, `N:9`, `n 9`) from the tokens starting at the
// n, so that the fix can show the canonical form.
func looseN(ts []tok) (int, bool) {
	var b strings.Builder
	for _, t := range ts {
		b.WriteString(t.s)
	}
	s := strings.TrimLeft(b.String(), "nN")
	s = strings.TrimRight(strings.TrimLeft(s, "=:"), ".,;")
	k, err := strconv.Atoi(s)
	return k, err == nil && k >= 0
}

// parseSeats reads the addressee list: comma-separated, spaces after commas tolerated.
func (m *Message) parseSeats(ts []tok) []Diagnostic {
	p := &m.pos
	var diags []Diagnostic
	errAt := func(col int, msg, fix string) {
		p.broken = true
		diags = append(diags, Diagnostic{Line: p.line, Col: col, Severity: SeverityError, Code: "header", Message: msg, Fix: fix})
	}
	if len(ts) == 0 {
		errAt(p.to+2, "to names no seat: write to <seat>, several as to a,b, or to all", "")
		return diags
	}
	for j, t := range ts {
		if j > 0 && !strings.HasSuffix(ts[j-1].s, ",") && !strings.HasPrefix(t.s, ",") {
			names := []string{}
			for _, t := range ts {
				names = append(names, strings.Trim(t.s, ","))
			}
			errAt(t.col, "addressees are separated by commas, with no spaces", "to "+strings.Join(names, ","))
			return diags
		}
	}
	if m.Header.To == nil && p.seats == nil {
		// Appended to in place up to two addressees, past that in a slice of their own.
		m.Header.To, p.seats = m.toBuf[:0:len(m.toBuf)], m.seatsBuf[:0:len(m.seatsBuf)]
	}
	for _, t := range ts {
		// The parts between commas, each with its column, as strings.SplitSeq(t.s, ",")
		// gives them.
		for off, rest, more := 0, t.s, true; more; {
			part := rest
			if k := strings.IndexByte(rest, ','); k >= 0 {
				part, rest = rest[:k], rest[k+1:]
			} else {
				more = false
			}
			col := t.col + off
			off += len(part) + 1
			if part == "" {
				continue
			}
			if !validSeat(part) {
				fix := ""
				if c := strings.TrimLeft(part, "@"); validSeat(c) {
					fix = c
				}
				errAt(col, quote(part)+" cannot be a seat name: seat names are letters, digits, '.', '_' and '-'", fix)
				continue
			}
			m.Header.To = append(m.Header.To, part)
			p.seats = append(p.seats, col)
		}
	}
	if len(m.Header.To) == 0 {
		m.Header.To, p.seats = nil, nil // no addressee is a nil list, as when none was appended
		if len(diags) == 0 {
			errAt(ts[0].col, "to names no seat: write to <seat>, several as to a,b, or to all", "")
		}
	}
	return diags
}

// Render writes m in canonical form: single spaces, the header's parts in their fixed order,
// one fact per line, each line ending in a newline. It writes what m holds, including a wrong
// n: fixing a count is the sender's decision, never the renderer's.
func Render(m *Message) string {
	var b strings.Builder
	b.WriteString(RenderHeader(m.Header))
	b.WriteByte('\n')
	for _, l := range m.Lines {
		b.WriteString(l.render())
		b.WriteByte('\n')
	}
	return b.String()
}

// RenderHeader writes the header line without its newline.
func RenderHeader(h Header) string {
	parts := make([]string, 0, 8)
	v := h.Version
	if v == "" {
		v = Version
	}
	parts = append(parts, v)
	for _, s := range []string{h.Intent, h.Topic} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if len(h.To) > 0 {
		parts = append(parts, "to", strings.Join(h.To, ","))
	}
	if h.Re > 0 {
		parts = append(parts, "re", strconv.FormatInt(h.Re, 10))
	}
	if h.N >= 0 {
		parts = append(parts, "n="+strconv.Itoa(h.N))
	}
	return strings.Join(parts, " ")
}

// render writes one fact line canonically.
func (l Line) render() string {
	s := l.Word
	if l.Key != "" {
		mark := l.Mark
		if mark == "" {
			mark = "#"
			if l.Word == "opt" {
				mark = "/"
			}
		}
		s += mark + l.Key
	}
	if l.Text != "" {
		s += " " + l.Text
	}
	return s
}

// Head is the line's first word as written, with its #k or /label.
func (l Line) Head() string {
	if l.Key == "" {
		return l.Word
	}
	mark := l.Mark
	if mark == "" {
		mark = "#"
		if l.Word == "opt" {
			mark = "/"
		}
	}
	// As written, it is usually in Raw at the line's column: no copy then.
	if at, n := l.Col()-1, len(l.Word)+len(mark)+len(l.Key); at+n <= len(l.Raw) {
		if h := l.Raw[at : at+n]; h[:len(l.Word)] == l.Word && h[len(l.Word):len(l.Word)+len(mark)] == mark && h[len(l.Word)+len(mark):] == l.Key {
			return h
		}
	}
	return l.Word + mark + l.Key
}

// Col is the 1-based byte column where the line's first word starts (1 for built lines).
func (l Line) Col() int { return max(l.col, 1) }

// TextCol is the 1-based byte column where the line's text starts.
func (l Line) TextCol() int {
	if l.textCol > 0 {
		return l.textCol
	}
	return l.Col() + len(l.Head()) + 1
}

// ParseTime reads an ISO basic UTC time, 20260918T0900Z or 20260918T090005Z, and rejects
// anything else, including out-of-range fields such as a 13th month.
func ParseTime(s string) (time.Time, bool) {
	if (len(s) != 14 && len(s) != 16) || s[8] != 'T' || s[len(s)-1] != 'Z' {
		return time.Time{}, false
	}
	digits := s[:8] + s[9:len(s)-1]
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return time.Time{}, false
		}
	}
	num := func(a, b int) int { n, _ := strconv.Atoi(digits[a:b]); return n }
	y, mo, d, hh, mm := num(0, 4), num(4, 6), num(6, 8), num(8, 10), num(10, 12)
	ss := 0
	if len(digits) == 14 {
		ss = num(12, 14)
	}
	if mo < 1 || mo > 12 || d < 1 || d > 31 || hh > 23 || mm > 59 || ss > 59 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(mo), d, hh, mm, ss, 0, time.UTC)
	if t.Day() != d { // 20260231 rolls over into March
		return time.Time{}, false
	}
	return t, true
}

// FormatTime writes t in ISO basic UTC form, with seconds only when they are not zero.
func FormatTime(t time.Time) string {
	t = t.UTC()
	if t.Second() != 0 {
		return t.Format("20060102T150405Z")
	}
	return t.Format("20060102T1504Z")
}

// Time returns the first ISO basic time written anywhere in the line's text: for an ask, its
// due time.
func (l Line) Time() (time.Time, bool) {
	for _, span := range isoBasicSpans(l.Text) {
		if t, ok := ParseTime(l.Text[span[0]:span[1]]); ok {
			return t, true
		}
	}
	return time.Time{}, false
}

// isoBasicSpans finds candidate ISO basic times (8 digits, T, 4 or 6 digits, Z) not glued to
// other letters or digits.
func isoBasicSpans(s string) [][2]int {
	var out [][2]int
	for i := 0; i+14 <= len(s); i++ {
		if !isDigit(s[i]) || (i > 0 && isAlnum(s[i-1])) {
			continue
		}
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j-i != 8 || j >= len(s) || s[j] != 'T' {
			i = j
			continue
		}
		k := j + 1
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		if (k-j-1 == 4 || k-j-1 == 6) && k < len(s) && s[k] == 'Z' && (k+1 == len(s) || !isAlnum(s[k+1])) {
			out = append(out, [2]int{i, k + 1})
		}
		i = k
	}
	return out
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

// Evidence kinds returned by ParseEvidence.
const (
	EvidenceCommit = "commit" // commit <sha> [on [branch] <name>]: proves code exists
	EvidenceRun    = "run"    // run <id>: proves a test run happened
)

// ParseEvidence reads an ev line's text. kind is "commit" for `commit <hex sha> [on [branch]
// <name>]`, "run" for `run <id>`, and "" for anything else, which no server can check and so
// proves nothing. Words after the recognised form are ignored.
func ParseEvidence(text string) (kind, ref, branch string) {
	// The words of strings.Fields, read one at a time without a slice of them: every ev line
	// of every post is read here, by the linter and the validator (FuzzParseEvidence holds it
	// to the strings.Fields version).
	first, rest := nextField(text)
	second, rest := nextField(rest)
	if second == "" {
		return "", "", ""
	}
	switch first {
	case "commit":
		sha := strings.TrimRight(second, ",;.")
		if !IsHexSHA(sha) {
			return "", "", ""
		}
		if on, rest := nextField(rest); on == "on" {
			name, rest := nextField(rest)
			if name == "branch" {
				name, _ = nextField(rest)
			}
			if name != "" {
				branch = strings.TrimRight(name, ",;")
			}
		}
		return EvidenceCommit, strings.ToLower(sha), branch
	case "run":
		id := strings.TrimRight(second, ",;.")
		if !validKey(id) && !validRunID(id) {
			return "", "", ""
		}
		return EvidenceRun, id, ""
	}
	return "", "", ""
}

// nextField returns the first of strings.Fields(s) ("" when there is none) and what follows
// it.
func nextField(s string) (field, rest string) {
	t, ok := firstToken(s)
	if !ok {
		return "", ""
	}
	end := t.col - 1 + len(t.s)
	return s[t.col-1 : end], s[end:]
}

func validRunID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isAlnum(c) || c == '.' || c == '-' || c == ':' || c == '/') {
			return false
		}
	}
	return true
}

// IsHexSHA reports whether s is an abbreviated or full git object name: 7 to 64 hex digits.
func IsHexSHA(s string) bool {
	if len(s) < 7 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func quote(s string) string { return "`" + s + "`" }

// replaceAt returns raw with old, written at 1-based column col, replaced by new.
func replaceAt(raw string, col int, old, new string) string {
	i := col - 1
	if i < 0 || i+len(old) > len(raw) || raw[i:i+len(old)] != old {
		return ""
	}
	return raw[:i] + new + raw[i+len(old):]
}
