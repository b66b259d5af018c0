package bpe

import (
	"testing"
	"unicode"
	"unicode/utf8"
)

// goClass is the class of r by Go's unicode package (Unicode 15.0.0 in Go 1.26).
func goClass(r rune) uint8 {
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
	}
	if unicode.Is(unicode.White_Space, r) {
		c |= cWS
	}
	return c
}

// TestClassesAgainstGo checks the generated Unicode 16.0.0 classes against Go's unicode
// package: they must agree on every code point that Go's version assigns, and every
// difference must be a code point that Go's version leaves unassigned (added by Unicode 15.1
// or 16.0), except the few whose category Unicode changed, listed here.
func TestClassesAgainstGo(t *testing.T) {
	loadClasses()
	changed := map[rune]bool{}
	added := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		ours := classSearch(r)
		if r < tableLimit && classTable[r] != ours {
			t.Fatalf("U+%04X: table %#x, runs %#x", r, classTable[r], ours)
		}
		theirs := goClass(r)
		if ours == theirs {
			continue
		}
		if !assignedInGo(r) {
			added++
			continue
		}
		changed[r] = true
	}
	t.Logf("Go's unicode is %s; classes differ on %d code points unassigned there and on %d assigned ones", unicode.Version, added, len(changed))
	for r := range changed {
		if !knownChanges[r] {
			t.Errorf("U+%04X: class %#x in Unicode 16.0.0, %#x in Go's %s", r, classSearch(r), goClass(r), unicode.Version)
		}
	}
}

// knownChanges are code points assigned in Unicode 15.0 whose class changed by 16.0.
var knownChanges = map[rune]bool{}

func assignedInGo(r rune) bool {
	for _, t := range []*unicode.RangeTable{unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs} {
		if unicode.Is(t, r) {
			return true
		}
	}
	return false
}

// TestClassWideDecodes checks classWide's own decoding of invalid bytes and two-byte
// sequences against utf8.DecodeRuneInString, on every lead byte and second byte.
func TestClassWideDecodes(t *testing.T) {
	loadClasses()
	for a := 0x80; a < 0x100; a++ {
		for b := 0; b < 0x100; b++ {
			for _, s := range []string{string([]byte{byte(a)}), string([]byte{byte(a), byte(b)}), string([]byte{byte(a), byte(b), 0x80}), string([]byte{byte(a), byte(b), 0x80, 0x80})} {
				c, n := classWide(s)
				r, m := utf8.DecodeRuneInString(s)
				var wc uint8
				if r < tableLimit {
					wc = classTable[r]
				} else {
					wc = classSearch(r)
				}
				if c != wc || n != m {
					t.Fatalf("%x: %d %d want %d %d", s, c, n, wc, m)
				}
			}
		}
	}
	// Every three bytes that start with a three-byte lead, whatever follows (overlong forms and
	// surrogates must come out as RuneError of one byte, as utf8 decodes them).
	for a := 0xE0; a < 0xF0; a++ {
		for b := 0; b < 0x100; b++ {
			for c := 0; c < 0x100; c++ {
				s := string([]byte{byte(a), byte(b), byte(c)})
				got, n := classWide(s)
				r, m := utf8.DecodeRuneInString(s)
				if want := classTable[r]; got != want || n != m {
					t.Fatalf("%x: %d %d want %d %d", s, got, n, want, m)
				}
			}
		}
	}
}
