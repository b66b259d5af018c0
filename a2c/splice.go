// The splice finder: LZ77-style matches against the session text (and the dictionary
// before it) and the originals, kept where they save tokens.

package a2c

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Match finder tuning (the encoder's choice, not part of the format): positions are
// hashed on their first hashLen bytes, and at most maxChain earlier positions with the
// same hash are tried.
const (
	hashLen  = 8
	maxChain = 48
)

// alignContext is how many bytes either side of a splice TokenAligned counts with it: the
// splice must save at least one token in that context. 8 was measured against 4 and 16
// on the toolbench, openai and swe-agent sources with the same result; a margin of one
// token more, or one less, lost on all three.
const alignContext = 8

// splice appends line to the session text and returns its payload form: spans that
// occurred before are replaced by splice markers (spliceMarker), literal openers escaped
// (appendLiteral).
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
				marker := spliceMarker(ps-src, pe-ps, !e.opt.noLetters)
				closed := pe < end && needsClose(text[pe:end])
				if closed {
					marker += spliceClose
				}
				keep := true
				saved := (pe - ps - len(marker)) / 4
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
					saved = e.opt.Counter.Count(left+string(text[ps:pe])+right) - e.opt.Counter.Count(left+marker+right)
					keep = saved > 0
				}
				if keep {
					out = e.appendLiteral(out, text[lit:ps], marker[0])
					out = append(out, marker...)
					e.feat.Splices = true
					e.feat.Close = e.feat.Close || closed
					switch marker[0] {
					case spliceDot:
						e.feat.Letters = true
					case spliceOpen:
						e.feat.Digits = true
					default:
						e.feat.Long = true
					}
					if src < 0 {
						e.feat.Originals = true
					} else if src < e.st.dictLen {
						e.feat.Dictionary = true
						if e.dictUsed != nil {
							for i := src; i < min(src+pe-ps, e.st.dictLen); i++ {
								e.dictUsed[i] = true
								e.dictSaved[i] += float64(saved) / float64(pe-ps)
							}
						}
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
	out = e.appendLiteral(out, text[lit:end], 0)
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

// spliceMarker writes ., the length's letter and the distance (up to 52 bytes, unless
// letters is false); or ^, the length in two digits and the distance; or from 100 bytes
// on ?, the length in three digits and the distance; with no close: a tokenizer reads
// the digits in groups of three, so the marker costs the opener (with the letter) and
// one token per three digits.
func spliceMarker(dist, n int, letters bool) string {
	b := make([]byte, 0, 16)
	if letters && n <= dotMax {
		b = append(b, spliceDot, dotLetter(n))
		return string(strconv.AppendInt(b, int64(dist), 10))
	}
	if n >= 100 {
		b = append(b, spliceLong, byte('0'+n/100))
	} else {
		b = append(b, spliceOpen)
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

// appendLiteral writes text that is not spliced. A ^ or ? that would read as the start
// of a splice (before a digit) or as half of a doubled one (before the same character)
// is written twice; next is the byte that follows the literal in the payload (0 at the
// end of the line).
func (e *Encoder) appendLiteral(dst, lit []byte, next byte) []byte {
	for i, c := range lit {
		dst = append(dst, c)
		if c == spliceDot {
			// Before a marker (which starts with . ^ or ?) or at the end of the line
			// a . reads as itself.
			if dotStarts(lit[i+1 : min(len(lit), i+3)]) {
				e.feat.DotEscaped = true
				dst = append(dst, spliceClose...)
			}
			continue
		}
		if c != spliceOpen && c != spliceLong {
			continue
		}
		n := next
		if i+1 < len(lit) {
			n = lit[i+1]
		}
		if n == c || (n >= '0' && n <= '9') {
			e.feat.Doubled = true
			dst = append(dst, c)
		}
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
