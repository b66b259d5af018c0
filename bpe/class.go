package bpe

import (
	"sync"
	"unicode"
	"unicode/utf8"
)

// Character classes used by the split patterns. A code point may have several.
const (
	cL     uint8 = 1 << iota // \p{L}: Lu Ll Lt Lm Lo
	cN                       // \p{N}: Nd Nl No
	cWS                      // \s: Unicode White_Space (includes U+0085 NEL, NBSP, U+2028...)
	cUpper                   // o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	cLower                   // o200k's [\p{Ll}\p{Lm}\p{Lo}\p{M}]
)

// tableLimit: code points below it are classified by one table lookup (planes 0-3: all of the
// BMP, emoji, and CJK extensions); the rest (tags, variation selectors supplement, private
// use) by unicode.Is.
const tableLimit = 0x40000

var (
	classOnce  sync.Once
	classTable []uint8 // [tableLimit]
)

// asciiClass is the class of each ASCII byte, so the common case needs no table load.
var asciiClass = func() (t [256]uint8) {
	for c := 0; c < 128; c++ {
		t[c] = classifySlow(rune(c))
	}
	return
}()

func classifySlow(r rune) uint8 {
	var c uint8
	switch {
	case unicode.Is(unicode.Lu, r), unicode.Is(unicode.Lt, r):
		c = cL | cUpper
	case unicode.Is(unicode.Ll, r):
		c = cL | cLower
	case unicode.Is(unicode.Lm, r), unicode.Is(unicode.Lo, r):
		c = cL | cUpper | cLower
	case unicode.Is(unicode.M, r):
		c = cUpper | cLower
	case unicode.Is(unicode.N, r):
		c = cN
	case unicode.Is(unicode.White_Space, r):
		c = cWS
	}
	return c
}

// buildClassTable fills classTable by walking Go's Unicode range tables (not rune by rune).
func buildClassTable() {
	t := make([]uint8, tableLimit)
	set := func(tab *unicode.RangeTable, c uint8) {
		for _, r := range tab.R16 {
			for x := uint32(r.Lo); x <= uint32(r.Hi); x += uint32(r.Stride) {
				t[x] |= c
			}
		}
		for _, r := range tab.R32 {
			for x := r.Lo; x <= r.Hi && x < tableLimit; x += r.Stride {
				t[x] |= c
			}
		}
	}
	set(unicode.Lu, cL|cUpper)
	set(unicode.Lt, cL|cUpper)
	set(unicode.Ll, cL|cLower)
	set(unicode.Lm, cL|cUpper|cLower)
	set(unicode.Lo, cL|cUpper|cLower)
	set(unicode.M, cUpper|cLower)
	set(unicode.N, cN)
	set(unicode.White_Space, cWS)
	classTable = t
}

// classAt decodes the character at s[i:] and returns its class and size in bytes. A byte
// that does not start a valid UTF-8 sequence is a character of its own (size 1) of no class,
// like U+FFFD: "other", matched by [^\s\p{L}\p{N}].
func classAt(s string, i int) (uint8, int) {
	if b := s[i]; b < utf8.RuneSelf {
		return asciiClass[b], 1
	}
	return classWide(s, i)
}

// classWide is classAt for a byte >= 0x80 (kept out of line so that classAt inlines).
func classWide(s string, i int) (uint8, int) {
	r, n := utf8.DecodeRuneInString(s[i:])
	if r < tableLimit {
		return classTable[r], n // classTable[0xFFFD] == 0 covers invalid bytes too
	}
	return classifySlow(r), n
}

func loadClasses() { classOnce.Do(buildClassTable) }
