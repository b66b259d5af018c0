package bpe

import (
	"sort"
	"sync"
	"unicode/utf8"
)

// Character classes used by the split patterns. A code point may have several. The data is
// unicode16.go (Unicode 16.0.0, tiktoken's version; Go 1.26's unicode package has 15.0.0).
const (
	cL     uint8 = 1 << iota // \p{L}: Lu Ll Lt Lm Lo
	cN                       // \p{N}: Nd Nl No
	cWS                      // \s: Unicode White_Space (includes U+0085 NEL, NBSP, U+2028...)
	cUpper                   // o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	cLower                   // o200k's [\p{Ll}\p{Lm}\p{Lo}\p{M}]
)

// tableLimit: code points below it are classified by one table lookup (planes 0-3: all of the
// BMP, emoji, CJK extensions); the rest (tags, variation selectors, private use) by a binary
// search of classRuns.
const tableLimit = 0x40000

var (
	classOnce  sync.Once
	classTable [tableLimit]uint8 // outside the heap, where the garbage collector does not count it
)

// asciiClass is the class of each byte below 0x80 (0 above), so that ASCII needs no table.
var asciiClass = func() (t [256]uint8) {
	for c := rune(0); c < utf8.RuneSelf; c++ {
		t[c] = classSearch(c)
	}
	return
}()

// classSearch returns the class of r from classRuns.
func classSearch(r rune) uint8 {
	i := sort.Search(len(classRuns), func(i int) bool { return rune(classRuns[i]>>8) > r }) - 1
	return uint8(classRuns[i])
}

// buildClassTable expands classRuns below tableLimit.
func buildClassTable() {
	t := classTable[:]
	for i, run := range classRuns {
		start := int(run >> 8)
		if start >= tableLimit {
			break
		}
		end := tableLimit
		if i+1 < len(classRuns) {
			end = min(end, int(classRuns[i+1]>>8))
		}
		if c := uint8(run); c != 0 {
			for x := start; x < end; x++ {
				t[x] = c
			}
		}
	}
}

func loadClasses() { classOnce.Do(buildClassTable) }

// classAt decodes the character at s[i:] and returns its class and size in bytes. A byte
// that does not start a valid UTF-8 sequence is a character of its own (size 1) of no class,
// like U+FFFD: "other", matched by [^\s\p{L}\p{N}].
func classAt(s string, i int) (uint8, int) {
	b := s[i]
	if b < utf8.RuneSelf {
		return asciiClass[b], 1
	}
	if startsNoChar(s, i) {
		return classTable[utf8.RuneError], 1 // without the call
	}
	return classWide(s[i:])
}

// startsNoChar reports whether the byte s[i], 0x80 or above, starts no UTF-8 character: a
// continuation byte, C0, C1 or F5-FF, or a lead byte not followed by a continuation byte (in
// random bytes, most of them). Such a byte is a character of its own, U+FFFD of one byte.
// Small enough to be inlined where a loop meets many of them (classAt, scanOther).
func startsNoChar(s string, i int) bool {
	b := s[i]
	return b < 0xC2 || b > 0xF4 || i+1 == len(s) || s[i+1]&0xC0 != 0x80
}

// classWide is classAt for a byte >= 0x80 (kept out of line so that callers' ASCII paths stay
// small).
func classWide(s string) (uint8, int) {
	// A byte that starts no character (startsNoChar) is utf8.RuneError of 1 byte, and a
	// two-byte sequence is decoded here: both without a call (the decoder would take its slow
	// path to reject the first).
	if startsNoChar(s, 0) {
		return classTable[utf8.RuneError], 1
	} else if b := s[0]; b < 0xE0 {
		return classTable[rune(b&0x1F)<<6|rune(s[1]&0x3F)], 2
	}
	r, n := utf8.DecodeRuneInString(s)
	if r < tableLimit {
		return classTable[r], n // classTable[0xFFFD] == 0 covers invalid bytes too
	}
	return classSearch(r), n
}
