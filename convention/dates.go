package convention

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parleyhq/parley/internal/casefold"
	"github.com/parleyhq/parley/internal/lazyre"
)

// dateHit is a date or time written in a form other than ISO basic, found in a line's text.
type dateHit struct {
	start, end int    // byte span in the text
	rewrite    string // the ISO basic form, or "" when the written form cannot be converted
	why        string // what is wrong with the written form
	assumeUTC  bool   // no zone was written: the rewrite assumes UTC

	// A date with no time of day, or a time of day with no date: two such hits next to
	// each other ("18:00 UTC on 2026-09-17") are one instant.
	dateOnly, clockOnly bool
	y, mo, d            int
	hh, mm, ss          int
	zoned               bool
}

const monthAlt = `Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?`

// clock matches a time of day: 09:00, 9:00pm, 9pm, 09:00:05, each with an optional zone.
func clock(p string) string {
	return fmt.Sprintf(`(?:(?P<%[1]sh>\d{1,2}):(?P<%[1]sm>\d{2})(?::(?P<%[1]ss>\d{2}))?(?:\s?(?P<%[1]sap>[ap]\.?m\.?))?|(?P<%[1]sh2>\d{1,2})\s?(?P<%[1]sap2>[ap]\.?m\.?))(?:\s?(?P<%[1]sz>UTC|GMT|Z))?`, p)
}

var (
	// 2026-09-19T12:00:00Z, 2026-09-19 12:00, 2026-09-19T12:00:00.250+02:00, 2026-09-19.
	extISORe = lazyre.New(`(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?\s?(Z|UTC|GMT|[+-]\d{2}:?\d{2})?)?`)
	// ISO basic that is nearly right: 20260919T1200 (no Z), 20260919T12:00Z, 20260919T12Z.
	nearBasicRe = lazyre.New(`(\d{4})(\d{2})(\d{2})T(\d{2})(?::?(\d{2}))?(?::?(\d{2}))?(Z)?`)
	// September 19, 2026 / 19 Sep 2026, with an optional time before ("12:00 UTC on") or
	// after (", 12:00 UTC", " at 9pm").
	namedRe = lazyre.New(`(?i)(?:` + clock("a") + `\s+(?:on\s+)?)?(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day,?\s+)?(?:(?P<mon1>` + monthAlt + `)\.?\s+(?P<d1>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<y1>\d{4})|(?P<d2>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mon2>` + monthAlt + `)\.?,?\s+(?P<y2>\d{4}))(?:,?\s+(?:at\s+)?` + clock("b") + `)?`)
	// Sep 19 / September 19th with no year: capitalised only, so that "may 3" is not a date.
	noYearRe = lazyre.New(`(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?\s+\d{1,2}(?:st|nd|rd|th)?\b`)
	// 19/09/2026, 09/19/2026, 2026/09/19.
	slashRe = lazyre.New(`(\d{1,4})/(\d{1,2})/(\d{2,4})`)
	// A time of day with a zone or am/pm but no date.
	clockRe = lazyre.New(`(?i)` + clock("c"))
	// Times that depend on when and where they are read.
	relativeRe = lazyre.New(`(?i)\b(today|tonight|tomorrow|yesterday|eod|eow|cob|end of (?:the )?(?:day|week|month)|next (?:week|month)|this (?:morning|afternoon|evening|week)|asap|(?:mon|tues|wednes|thurs|fri|satur|sun)day)\b`)
)

var monthNum = map[string]int{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12}

// findDates returns the non-ISO-basic dates and times in s, left to right, without overlaps.
func findDates(s string) []dateHit {
	var hits []dateHit
	taken := func(a, b int) bool {
		for _, h := range hits {
			if a < h.end && b > h.start {
				return true
			}
		}
		return false
	}
	// A date glued into a longer token (run dba-2026-09-21-a, logs/2026-09-21.txt) is part
	// of a name, and rewriting it would break the name.
	bounded := func(a, b int) bool {
		if a > 0 && (isAlnum(s[a-1]) || s[a-1] == '-' || s[a-1] == '/' || s[a-1] == '.') {
			return false
		}
		if b < len(s) && (isAlnum(s[b]) || s[b] == '-' || s[b] == '/' || s[b] == '.' && b+1 < len(s) && isAlnum(s[b+1])) {
			return false
		}
		return true
	}
	// ISO basic times already right are not hits, but they must not be re-read as something else.
	for _, sp := range isoBasicSpans(s) {
		if _, ok := ParseTime(s[sp[0]:sp[1]]); ok {
			hits = append(hits, dateHit{start: sp[0], end: sp[1]})
		}
	}
	// Cheap tests first: most lines hold no date, and the regular expressions are the
	// linter's main cost.
	hint := dateHintsOf(s)
	hasDigit := hint.digit
	// What the stem tests find in the line lowered (a line within ASCII lowered on the stack).
	low := lowerFactsFor(s, hint, !hint.wide && digitRun(s, 4))
	var extISO, nearBasic, named, slash, clocks [][]int
	if hasDigit && extISOShape(s) {
		extISO = extISORe.FindAllStringSubmatchIndex(s, -1)
	}
	if hasDigit && hint.upperT && len(s) >= 11 {
		nearBasic = nearBasicMatches(s)
	}
	month := low.month
	// Both of namedRe's forms end in a 4-digit year, and write the month before white space
	// and a digit; a line outside ASCII is not put to the second test (its (?i) folds ſ to s,
	// which lowering does not).
	if month && digitRun(s, 4) && (hint.wide || low.monthDay) {
		named = namedRe.FindAllStringSubmatchIndex(s, -1)
	}
	if hasDigit && hint.slash && slashShape(s) {
		slash = slashRe.FindAllStringSubmatchIndex(s, -1)
	}
	if hasDigit && (hint.colon || hint.meridiem) && clockShape(s) {
		clocks = clockRe.FindAllStringSubmatchIndex(s, -1)
	}
	for _, m := range extISO {
		a, b := m[0], m[1]
		if !bounded(a, b) || taken(a, b) {
			continue
		}
		g := func(i int) string {
			if m[2*i] < 0 {
				return ""
			}
			return s[m[2*i]:m[2*i+1]]
		}
		y, mo, d := atoi(g(1)), atoi(g(2)), atoi(g(3))
		h := dateHit{start: a, end: b, why: "an extended ISO date"}
		if g(4) == "" {
			if validDate(y, mo, d) {
				h.rewrite = fmt.Sprintf("%04d%02d%02d", y, mo, d)
				h.dateOnly, h.y, h.mo, h.d = true, y, mo, d
			}
			hits = append(hits, h)
			continue
		}
		hh, mm, ss := atoi(g(4)), atoi(g(5)), atoi(g(6))
		zone := g(8)
		off, ok := zoneOffset(zone)
		if !ok {
			h.assumeUTC = true
		}
		if t, ok := mkTime(y, mo, d, hh, mm, ss, off); ok {
			h.rewrite = FormatTime(t)
		}
		if g(7) != "" {
			h.why = "an extended ISO time with fractions of a second (dropped in the rewrite)"
		}
		hits = append(hits, h)
	}
	for _, m := range nearBasic {
		a, b := m[0], m[1]
		if !bounded(a, b) || taken(a, b) {
			continue
		}
		g := func(i int) string {
			if m[2*i] < 0 {
				return ""
			}
			return s[m[2*i]:m[2*i+1]]
		}
		h := dateHit{start: a, end: b, why: "a nearly ISO basic time"}
		if g(7) == "" {
			h.assumeUTC = true
			h.why = "an ISO basic time without its Z"
		}
		if t, ok := mkTime(atoi(g(1)), atoi(g(2)), atoi(g(3)), atoi(g(4)), atoi(g(5)), atoi(g(6)), 0); ok {
			h.rewrite = FormatTime(t)
		}
		hits = append(hits, h)
	}
	for _, m := range named {
		a, b := m[0], m[1]
		if !bounded(a, b) || taken(a, b) {
			continue
		}
		g := func(name string) string {
			i := namedRe.SubexpIndex(name)
			if i < 0 || m[2*i] < 0 {
				return ""
			}
			return s[m[2*i]:m[2*i+1]]
		}
		mon, day, year := g("mon1"), g("d1"), g("y1")
		if mon == "" {
			mon, day, year = g("mon2"), g("d2"), g("y2")
		}
		h := dateHit{start: a, end: b, why: "a written-out date"}
		mo := monthNum[strings.ToLower(mon[:3])]
		hh, mm, ss, zone, hasClock := clockParts(g, "a")
		if !hasClock {
			hh, mm, ss, zone, hasClock = clockParts(g, "b")
		}
		if !hasClock {
			if validDate(atoi(year), mo, atoi(day)) {
				h.rewrite = fmt.Sprintf("%04d%02d%02d", atoi(year), mo, atoi(day))
				h.dateOnly, h.y, h.mo, h.d = true, atoi(year), mo, atoi(day)
			}
		} else {
			h.assumeUTC = zone == ""
			if t, ok := mkTime(atoi(year), mo, atoi(day), hh, mm, ss, 0); ok {
				h.rewrite = FormatTime(t)
			}
		}
		hits = append(hits, h)
	}
	for _, m := range slash {
		a, b := m[0], m[1]
		if !bounded(a, b) || taken(a, b) {
			continue
		}
		x, y, z := s[m[2]:m[3]], s[m[4]:m[5]], s[m[6]:m[7]]
		h := dateHit{start: a, end: b, why: "a slash date, which readers parse as day/month or month/day"}
		switch {
		case len(x) == 4 && len(z) == 2:
			if validDate(atoi(x), atoi(y), atoi(z)) {
				h.rewrite = fmt.Sprintf("%s%02d%s", x, atoi(y), z)
			}
		case len(z) == 4 && len(x) <= 2:
			d1, d2, yr := atoi(x), atoi(y), atoi(z)
			switch {
			case d1 > 12 && validDate(yr, d2, d1):
				h.rewrite = fmt.Sprintf("%04d%02d%02d", yr, d2, d1)
			case d2 > 12 && validDate(yr, d1, d2):
				h.rewrite = fmt.Sprintf("%04d%02d%02d", yr, d1, d2)
			}
		default:
			continue // 1/2/3 or a fraction: not a date
		}
		hits = append(hits, h)
	}
	var noYear [][]int
	if month && spaceDigit(s) && monthBeforeDay(s, capitalMonthIndex) { // a capitalised month, spaces and a day
		noYear = noYearRe.FindAllStringIndex(s, -1)
	}
	for _, m := range noYear {
		a, b := m[0], m[1]
		if !bounded(a, b) || taken(a, b) {
			continue
		}
		hits = append(hits, dateHit{start: a, end: b, why: "a date with no year"})
	}
	var clockCands []dateHit
	for _, m := range clocks {
		a, b := m[0], m[1]
		if !bounded(a, b) || taken(a, b) {
			continue
		}
		g := func(name string) string {
			i := clockRe.SubexpIndex(name)
			if i < 0 || m[2*i] < 0 {
				return ""
			}
			return s[m[2*i]:m[2*i+1]]
		}
		hh, mm, ss, zone, _ := clockParts(g, "c")
		h := dateHit{start: a, end: b, why: "a time of day with no date", clockOnly: hh <= 23 && mm <= 59 && ss <= 59, hh: hh, mm: mm, ss: ss, zoned: zone != ""}
		// A bare 12:30 could be a ratio or a score: alone, only a zone or am/pm makes it a
		// clock time; next to a date it is one in any case.
		if g("cz") == "" && g("cap") == "" && g("cap2") == "" {
			clockCands = append(clockCands, h)
			continue
		}
		hits = append(hits, h)
	}
	var relative [][]int
	if low.relative && relativeWord(s) {
		relative = relativeRe.FindAllStringIndex(s, -1)
	}
	for _, m := range relative {
		a, b := m[0], m[1]
		if taken(a, b) {
			continue
		}
		hits = append(hits, dateHit{start: a, end: b, why: "a relative time, which means a different instant to each reader"})
	}
	// Drop the placeholders for ISO basic times that were already right.
	out := hits[:0]
	for _, h := range hits {
		if h.why != "" {
			out = append(out, h)
		}
	}
	sortHits(out)
	return mergeDateClock(s, out, clockCands)
}

// dateHints are the bytes findDates' cheap tests look for, found in one pass over the line
// rather than one search each (FuzzDatePrefilters holds them to those searches).
type dateHints struct {
	digit  bool // an ASCII digit: strings.ContainsAny(s, "0123456789")
	upperT bool // strings.Contains(s, "T")
	slash  bool // strings.Contains(s, "/")
	colon  bool // strings.Contains(s, ":")
	// folds is false when strings.ToLower(s) is s: no ASCII upper-case letter and nothing
	// outside ASCII.
	folds bool
	// meridiem: strings.ToLower(s) holds am, pm, a.m or p.m. Lowering makes no a, p, m or
	// '.' of a character outside ASCII (TestLowerToASCII), so these are found in s with
	// ASCII case folded.
	meridiem bool
	// wide: s holds a byte outside ASCII.
	wide bool
}

func dateHintsOf(s string) (h dateHints) {
	for i := 0; i < len(s); i++ {
		switch hintClass[s[i]] {
		case 0: // nearly every byte: a lower-case letter other than m, a space, punctuation
		case hintDigit:
			h.digit = true
		case hintUpper:
			h.folds = true
			h.upperT = h.upperT || s[i] == 'T'
			h.meridiem = h.meridiem || s[i] == 'M' && meridiemBefore(s[:i])
		case hintM:
			h.meridiem = h.meridiem || meridiemBefore(s[:i])
		case hintOther:
			h.folds, h.wide = true, true
		case hintSlash:
			h.slash = true
		case hintColon:
			h.colon = true
		}
	}
	return h
}

// The classes of bytes dateHintsOf tells apart; 0 is every other byte.
const (
	hintDigit = 1 + iota
	hintUpper
	hintM
	hintOther // outside ASCII
	hintSlash
	hintColon
)

var hintClass = func() (c [256]uint8) {
	for b := '0'; b <= '9'; b++ {
		c[b] = hintDigit
	}
	for b := 'A'; b <= 'Z'; b++ {
		c[b] = hintUpper
	}
	for b := utf8.RuneSelf; b < 256; b++ {
		c[b] = hintOther
	}
	c['m'], c['/'], c[':'] = hintM, hintSlash, hintColon
	return c
}()

// meridiemBefore reports whether before, what precedes an m, ends with a or p, or with a.
// or p., in either case.
func meridiemBefore(before string) bool {
	n := len(before)
	if n > 0 && before[n-1] == '.' {
		n--
	}
	return n > 0 && (before[n-1]|0x20 == 'a' || before[n-1]|0x20 == 'p')
}

// mergeDateClock joins a date-only hit and a time of day written beside it ("18:00 UTC on
// 2026-09-17", "2026-09-17 at 18:00") into one hit whose rewrite is the whole instant.
func mergeDateClock(s string, hits, cands []dateHit) []dateHit {
	joinable := func(gap string) bool {
		switch strings.Trim(strings.ToLower(gap), " ,\t") {
		case "", "on", "at", "by":
			return true
		}
		return false
	}
	var out []dateHit
	for i := 0; i < len(hits); i++ {
		h := hits[i]
		if !h.dateOnly {
			out = append(out, h)
			continue
		}
		// The clock may be the next hit, the previous one, or a zone-less candidate.
		var clock *dateHit
		var fromHits int = -1
		if i+1 < len(hits) && hits[i+1].clockOnly && joinable(s[h.end:hits[i+1].start]) {
			clock, fromHits = &hits[i+1], i+1
		} else if len(out) > 0 && out[len(out)-1].clockOnly && joinable(s[out[len(out)-1].end:h.start]) {
			clock = &out[len(out)-1]
			out = out[:len(out)-1]
		} else {
			for j := range cands {
				c := &cands[j]
				if c.clockOnly && (c.start >= h.end && joinable(s[h.end:c.start]) || c.end <= h.start && joinable(s[c.end:h.start])) {
					clock = c
					break
				}
			}
		}
		if clock == nil {
			out = append(out, h)
			continue
		}
		t, ok := mkTime(h.y, h.mo, h.d, clock.hh, clock.mm, clock.ss, 0)
		if !ok {
			out = append(out, h)
			continue
		}
		merged := dateHit{start: min(h.start, clock.start), end: max(h.end, clock.end), rewrite: FormatTime(t),
			why: "a date and a time written apart", assumeUTC: !clock.zoned}
		out = append(out, merged)
		if fromHits >= 0 {
			i = fromHits
		}
	}
	return out
}

var monthStems = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}

func mentionsMonth(lower string) bool { return monthIndex.in(lower) }

// monthIndex and relativeIndex are monthStems and relativeStems by their first byte.
var monthIndex, relativeIndex = newStemIndex(monthStems), newStemIndex(relativeStems)

// stemIndex holds stems by their first byte, and which second bytes follow each first byte
// in some stem: most bytes of a line start no stem, and most of those that do (e, t, a…)
// are not followed by a byte any stem has second, which one table look-up tells.
type stemIndex struct {
	first [256][]string
	// Bit c&63 of second[b] is set when a stem starts with b then c (bytes that share their
	// low six bits share a bit: a set bit is worth a look, not a match).
	second [256]uint64
}

func newStemIndex(stems []string) *stemIndex {
	var x stemIndex
	for _, m := range stems {
		if len(m) < 2 {
			panic("convention: a stem of one byte")
		}
		x.first[m[0]] = append(x.first[m[0]], m)
		x.second[m[0]] |= 1 << (m[1] & 63)
	}
	return &x
}

// in reports whether s holds one of the stems, in one pass over s rather than one search
// per stem.
func (x *stemIndex) in(s string) bool { return stemsIn(x, s) }

func stemsIn[S string | []byte](x *stemIndex, s S) bool {
	for i := 0; i+1 < len(s); i++ { // a stem has two bytes at least
		if x.second[s[i]]&(1<<(s[i+1]&63)) == 0 {
			continue
		}
		for _, m := range x.first[s[i]] {
			if len(s)-i >= len(m) && s[i+1] == m[1] && string(s[i+2:i+len(m)]) == m[2:] {
				return true
			}
		}
	}
	return false
}

// digitRun reports whether s holds n ASCII digits in a row (what \d{n} needs).
func digitRun(s string, n int) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			if run++; run >= n {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// spaceDigit reports whether a white-space character (what \s matches) is followed by an
// ASCII digit somewhere in s.
func spaceDigit(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\f', '\r':
			if s[i+1] >= '0' && s[i+1] <= '9' {
				return true
			}
		}
	}
	return false
}

// nearBasicMatches is nearBasicRe.FindAllStringSubmatchIndex(s, -1), with the expression run
// only where a match can start, on the bytes a match can span: every match starts with eight
// digits, a T and two digits, and spans at most nearBasicMax bytes, and the expression has no
// anchor or word boundary, so what it matches from such a start depends on those bytes alone.
// The expression's backtracking over the whole of a line was most of the cost of a line with
// a time written right (FuzzNearBasic holds the two to the same answers).
func nearBasicMatches(s string) [][]int {
	var out [][]int
	for from := 0; ; {
		t := strings.IndexByte(s[from:], 'T')
		if t < 0 {
			return out
		}
		t += from
		i := t - 8
		if i < from || t+2 >= len(s) || !allDigits(s[i:t]) || !isDigit(s[t+1]) || !isDigit(s[t+2]) {
			from = t + 1
			continue
		}
		m := nearBasicRe.FindStringSubmatchIndex(s[i:min(len(s), i+nearBasicMax)])
		if m == nil || m[0] != 0 { // cannot be: the window starts with what every match does
			return nearBasicRe.FindAllStringSubmatchIndex(s, -1)
		}
		for k := range m {
			if m[k] >= 0 {
				m[k] += i
			}
		}
		out = append(out, m)
		from = m[1]
	}
}

// nearBasicMax is the longest match of nearBasicRe: 20260919T12:00:00Z.
const nearBasicMax = len("20260919T12:00:00Z")

// slashShape reports whether s holds what every match of slashRe does: a digit, a slash, one
// or two digits, a slash and a digit. Lines with a digit and a slash are common (paths, 1/3,
// feat/x2) and seldom dates.
func slashShape(s string) bool {
	for p := 1; p+2 < len(s); p++ {
		if s[p] != '/' || !isDigit(s[p-1]) || !isDigit(s[p+1]) {
			continue
		}
		q := p + 2
		if isDigit(s[q]) {
			q++
		}
		if q+1 < len(s) && s[q] == '/' && isDigit(s[q+1]) {
			return true
		}
	}
	return false
}

// lowerFacts are what findDates' stem tests find in a line lowered (strings.ToLower): a
// month's stem, with a digit in the line (month); a month's spelling before white space and a
// digit, when asked (monthDay); a stem of the relative words (relative).
type lowerFacts struct{ month, monthDay, relative bool }

// lowerFactsFor is lowerFactsOf(strings.ToLower(s), …) without a new string for a line within
// ASCII: one that has nothing to lower is read as it is, another lowered on the stack
// (TestLowerFacts holds the three ways to the same answers).
func lowerFactsFor(s string, hint dateHints, dayWanted bool) lowerFacts {
	switch {
	case !hint.folds:
		return lowerFactsOf(s, hint.digit, dayWanted)
	case !hint.wide:
		var small [256]byte
		b := small[:0]
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			b = append(b, c)
		}
		return lowerFactsOf(b, hint.digit, dayWanted)
	}
	return lowerFactsOf(strings.ToLower(s), hint.digit, dayWanted)
}

func lowerFactsOf[S string | []byte](lower S, digit, dayWanted bool) (f lowerFacts) {
	f.month = digit && stemsIn(monthIndex, lower)
	f.monthDay = f.month && dayWanted && monthBeforeDay(lower, monthFormIndex)
	f.relative = stemsIn(relativeIndex, lower)
	return f
}

// monthForms are the spellings of monthAlt, lower-case. monthFormIndex holds them all, for
// namedRe on a line lowered; capitalMonthIndex holds them capitalised, as noYearRe requires,
// without May ("may 3" is not a date).
var monthForms = []string{"jan", "january", "feb", "february", "mar", "march", "apr", "april", "may", "jun", "june",
	"jul", "july", "aug", "august", "sep", "sept", "september", "oct", "october", "nov", "november", "dec", "december"}

var monthFormIndex, capitalMonthIndex = newStemIndex(monthForms), func() *stemIndex {
	var caps []string
	for _, m := range monthForms {
		if m != "may" {
			caps = append(caps, strings.ToUpper(m[:1])+m[1:])
		}
	}
	return newStemIndex(caps)
}()

// monthBeforeDay reports whether s holds one of x's month spellings followed by an optional
// '.' and ',', white space, and an ASCII digit: what every match of noYearRe needs in s
// (capitalMonthIndex), and of namedRe in an ASCII line lowered (monthFormIndex), whose day
// or year follows the month. Most lines that mention a month's stem do not ("decide 2026",
// "mark 2026"), and this test is far cheaper than either expression (FuzzDatePrefilters
// holds it to them).
func monthBeforeDay[S string | []byte](s S, x *stemIndex) bool {
	for i := 0; i+1 < len(s); i++ {
		if x.second[s[i]]&(1<<(s[i+1]&63)) == 0 {
			continue
		}
		for _, m := range x.first[s[i]] {
			if len(s)-i >= len(m) && string(s[i+1:i+len(m)]) == m[1:] && dayAfter(s, i+len(m)) {
				return true
			}
		}
	}
	return false
}

// dayAfter reports whether s from j holds an optional '.' and ',', then white space, then an
// ASCII digit.
func dayAfter[S string | []byte](s S, j int) bool {
	if j < len(s) && s[j] == '.' {
		j++
	}
	if j < len(s) && s[j] == ',' {
		j++
	}
	k := j
	for k < len(s) && reSpace(s[k]) {
		k++
	}
	return k > j && k < len(s) && isDigit(s[k])
}

// reSpace is what \s matches in Go's regular expressions, and the vertical tab.
func reSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == '\v'
}

// clockShape reports whether s holds what every match of clockRe starts with: a digit, then
// a colon and two digits (9:30), or am or pm in either case, with an optional '.' inside and
// one optional space before (9pm, 9 A.M). Many lines with a colon and a digit hold no time
// ("ask decide 20260918T0900Z: mock"), and the test is far cheaper than the expression.
func clockShape(s string) bool {
	for i := 0; i+2 < len(s); i++ {
		if !isDigit(s[i]) {
			continue
		}
		if s[i+1] == ':' {
			if i+3 < len(s) && isDigit(s[i+2]) && isDigit(s[i+3]) {
				return true
			}
			continue
		}
		j := i + 1
		if reSpace(s[j]) {
			j++
		}
		if j < len(s) && (s[j]|0x20 == 'a' || s[j]|0x20 == 'p') {
			j++
			if j < len(s) && s[j] == '.' {
				j++
			}
			if j < len(s) && s[j]|0x20 == 'm' {
				return true
			}
		}
	}
	return false
}

var relativeStems = []string{"day", "tonight", "tomorrow", "eod", "eow", "cob", "end of", "next ", "this ", "asap"}

func mentionsRelative(lower string) bool { return relativeIndex.in(lower) }

// extISOShape reports whether s holds dddd-dd-dd (ASCII digits), which every match of
// extISORe starts with: most lines with a digit and a dash (run load-17, p=0.7-0.9) hold no
// date, and the test is far cheaper than the regular expression.
func extISOShape(s string) bool {
	for i := 0; i+10 <= len(s); i++ {
		if s[i+4] == '-' && s[i+7] == '-' && allDigits(s[i:i+4]) && allDigits(s[i+5:i+7]) && allDigits(s[i+8:i+10]) {
			return true
		}
	}
	return false
}

// relativeWords are the words and phrases of relativeRe, each of which a match holds.
var relativeWords = []string{"today", "tonight", "tomorrow", "yesterday", "eod", "eow", "cob", "end of", "next week",
	"next month", "this morning", "this afternoon", "this evening", "this week", "asap",
	"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}

// relativeWord reports whether s holds one of relativeWords in any case, as relativeRe's (?i)
// reads case: the Kelvin sign is a k and the long s (ſ) an s. It is false only where
// relativeRe has no match, and narrows mentionsRelative's stems ("next ", "this ", "day"),
// which ordinary lines hold ("todo next batch").
func relativeWord(s string) bool { return foldedStemsIn(s, relativeWordIndex) }

// lowerStemsIn reports whether strings.ToLower(s) holds one of x's stems, lowering a line
// within ASCII on the stack rather than in a new string.
func lowerStemsIn(s string, x *stemIndex) bool {
	var small [256]byte
	f := small[:0]
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return stemsIn(x, strings.ToLower(s)) // ToLower's own rules outside ASCII
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		f = append(f, c)
	}
	return stemsIn(x, f)
}

// foldedStemsIn reports whether s, with its case folded as a (?i) regular expression reads it
// (casefold: ASCII letters, the Kelvin sign as k and the long s as s), holds one of x's
// lower-case stems.
func foldedStemsIn(s string, x *stemIndex) bool {
	var small [256]byte // the folded text of most lines, on the stack
	f := casefold.Append(small[:0], s)
	return stemsIn(x, f)
}

// relativeWordIndex is relativeWords by their first byte.
var relativeWordIndex = newStemIndex(relativeWords)

func sortHits(h []dateHit) {
	for i := 1; i < len(h); i++ {
		for j := i; j > 0 && h[j].start < h[j-1].start; j-- {
			h[j], h[j-1] = h[j-1], h[j]
		}
	}
}

// clockParts reads the clock groups with prefix p, converting am/pm to 24 hours.
func clockParts(g func(string) string, p string) (hh, mm, ss int, zone string, ok bool) {
	h, ap := g(p+"h"), g(p+"ap")
	if h == "" {
		h, ap = g(p+"h2"), g(p+"ap2")
	}
	if h == "" {
		return 0, 0, 0, "", false
	}
	hh, mm, ss = atoi(h), atoi(g(p+"m")), atoi(g(p+"s"))
	switch strings.ToLower(strings.ReplaceAll(ap, ".", "")) {
	case "am":
		if hh == 12 {
			hh = 0
		}
	case "pm":
		if hh < 12 {
			hh += 12
		}
	}
	return hh, mm, ss, g(p + "z"), true
}

// zoneOffset reads Z, UTC, GMT or ±hh[:]mm as seconds east of UTC; ok is false when no zone
// was written.
func zoneOffset(z string) (int, bool) {
	switch z {
	case "":
		return 0, false
	case "Z", "UTC", "GMT":
		return 0, true
	}
	sign := 1
	if z[0] == '-' {
		sign = -1
	}
	digits := strings.ReplaceAll(z[1:], ":", "")
	if len(digits) != 4 {
		return 0, false
	}
	return sign * (atoi(digits[:2])*3600 + atoi(digits[2:])*60), true
}

func mkTime(y, mo, d, hh, mm, ss, off int) (time.Time, bool) {
	if !validDate(y, mo, d) || hh > 23 || mm > 59 || ss > 59 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(mo), d, hh, mm, ss, 0, time.FixedZone("", off))
	return t.UTC(), true
}

func validDate(y, mo, d int) bool {
	if y < 1 || mo < 1 || mo > 12 || d < 1 || d > 31 {
		return false
	}
	return time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC).Day() == d
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
