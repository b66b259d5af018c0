package bpe

import (
	"math/bits"
	"unsafe"
)

// The pre-tokenizers: hand-written matchers equivalent to tiktoken's split regexes under
// leftmost-first alternation with greedy, backtracking quantifiers (fancy-regex semantics).
// Each returns the end of the piece that starts at i (i < len(s)); the regexes match every
// character, so pieces tile the input.
//
// cl100k_base:
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// o200k_base:
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|\p{N}{1,3}
//	| ?[^\s\p{L}\p{N}]+[\r\n/]*
//	|\s*[\r\n]+
//	|\s+(?!\S)
//	|\s+

// contraction returns the length of (?i:'s|'t|'re|'ve|'m|'ll|'d) matched at s[i:], or 0.
// Case-insensitivity is Unicode simple case folding as in Rust's regex crate, so 's also
// matches U+017F LATIN SMALL LETTER LONG S (bytes C5 BF); no other letter here has a fold
// outside ASCII.
func contraction(s string, i int) int {
	if i >= len(s) || s[i] != '\'' || i+1 >= len(s) {
		return 0
	}
	switch s[i+1] | 0x20 { // ASCII case folding; no other byte maps onto these letters
	case 's', 't', 'm', 'd':
		return 2
	case 'r', 'v':
		if i+2 < len(s) && s[i+2]|0x20 == 'e' {
			return 3
		}
	case 'l':
		if i+2 < len(s) && s[i+2]|0x20 == 'l' {
			return 3
		}
	}
	if s[i+1] == 0xC5 && i+2 < len(s) && s[i+2] == 0xBF { // ſ
		return 3
	}
	return 0
}

func isCRLF(b byte) bool { return b == '\r' || b == '\n' }

// scan returns the end of the run of characters from i whose class has any bit of want.
func scan(s string, i int, want uint8) int {
	for i < len(s) {
		if b := s[i]; b < 0x80 {
			if asciiClass[b]&want == 0 {
				return i
			}
			i++
			continue
		}
		c, n := classWide(s[i:])
		if c&want == 0 {
			return i
		}
		i += n
	}
	return i
}

// scanOther returns the end of the run of [^\s\p{L}\p{N}] from i.
func scanOther(s string, i int) int {
	for i < len(s) {
		if b := s[i]; b < 0x80 {
			if asciiClass[b]&(cWS|cL|cN) != 0 {
				return i
			}
			i++
			continue
		}
		// A byte that starts no character (in random or broken input, most bytes from 0x80 up)
		// is an other character of one byte, as classWide would say, without the call.
		if startsNoChar(s, i) {
			i++
			continue
		}
		c, n := classWide(s[i:])
		if c&(cWS|cL|cN) != 0 {
			return i
		}
		i += n
	}
	return i
}

// numbers matches \p{N}{1,3} at i (the character at i is a number).
func numbers(s string, i int) int {
	for k := 0; k < 3 && i < len(s); k++ {
		c, n := asciiClass[s[i]], 1
		if s[i] >= 0x80 {
			c, n = classWide(s[i:])
		}
		if c&cN == 0 {
			break
		}
		i += n
	}
	return i
}

// spaces matches \s*[\r\n]+|\s+(?!\S)|\s+ at i (the character at i is white space, and the
// earlier alternatives did not match).
func spaces(s string, i int) int {
	lastNL := -1 // end of the last \r or \n in the run
	last := i    // start of the last character of the run
	j := i
	for j < len(s) {
		if j-i >= 16 && j+10 <= len(s) { // a long run: eight bytes at a time
			j, last, lastNL = spacesLong(s, j, last, lastNL)
		}
		b := s[j]
		if b < 0x80 {
			f := asciiSpace[b]
			if f == 0 {
				break
			}
			last = j
			j++
			if f == spaceNL {
				lastNL = j
			}
			continue
		}
		// The two white space characters beyond ASCII that are common in text, NBSP (C2 A0) and
		// U+3000 (E3 80 80), without a call; any other through its class.
		n := 0
		if b == 0xC2 && j+1 < len(s) && s[j+1] == 0xA0 {
			n = 2
		} else if b == 0xE3 && j+2 < len(s) && s[j+1] == 0x80 && s[j+2] == 0x80 {
			n = 3
		} else if c, w := classWide(s[j:]); c&cWS != 0 {
			n = w
		} else {
			break
		}
		last = j
		j += n
	}
	if lastNL > 0 { // \s*[\r\n]+ backs off to the last newline of the run
		return lastNL
	}
	if j == len(s) || last == i { // \s+(?!\S) at the end of input, or \s+ for one character
		return j
	}
	return last // \s+(?!\S) leaves the last space for the next piece
}

// spacesLong goes on with spaces' run at j (a character's start, with j+10 <= len(s)), eight
// bytes at a time, through ASCII white space, NBSP and U+3000, with no branch on the bytes
// (where these come in random order, as in a run of mixed white space, spaces' tests of each
// character mispredict: BenchmarkSpaces, 9.6 ms a pass byte by byte, 5.5 ms this way; eight
// bytes of one kind, as in a run of spaces, take one test). It returns the start of the first character
// that is none of these, or of the last one it read whole, for spaces to go on from, with last
// and lastNL as spaces keeps them.
func spacesLong(s string, j, last, lastNL int) (int, int, int) {
	const ones, lo7, hi = 0x0101010101010101, 0x7F7F7F7F7F7F7F7F, 0x8080808080808080
	// eq has the top bit of each byte of w that equals c set, and no other bit.
	eq := func(w uint64, c byte) uint64 {
		x := w ^ ones*uint64(c)
		return ^((x&lo7 + lo7) | x) & hi
	}
	b := unsafe.Pointer(unsafe.StringData(s))
	var carry uint64 // the bytes of the word at j that a character begun before it covers
	for ; j+10 <= len(s); j += 8 {
		w := le64(unsafe.Add(b, j))
		if c := byte(w); w == ones*uint64(c) && c < 0x80 && asciiSpace[c] != 0 { // eight of one byte
			last = j + 7
			if asciiSpace[c] == spaceNL {
				lastNL = j + 8
			}
			continue
		}
		w1, w2 := le64(unsafe.Add(b, j+1)), le64(unsafe.Add(b, j+2))
		nbsp := eq(w, 0xC2) & eq(w1, 0xA0)
		ideo := eq(w, 0xE3) & eq(w1, 0x80) & eq(w2, 0x80)
		lo := w & lo7 // \t to \r: 9 <= lo < 14, and no top bit
		ascii := (eq(w, ' ') | (lo+ones*(0x80-9))&^(lo+ones*(0x80-14))&^w) & hi
		starts := ascii | nbsp | ideo
		un := ^(starts | nbsp<<8 | ideo<<8 | ideo<<16 | carry) & hi // bytes that are in no character
		end := uint(64)                                             // the first of them, in bits
		if un != 0 {
			end = uint(bits.TrailingZeros64(un)) - 7
		}
		before := uint64(1)<<end - 1 // (all ones for end == 64)
		if m := starts & before; m != 0 {
			last = j + (63-bits.LeadingZeros64(m))>>3
		}
		if m := (eq(w, '\n') | eq(w, '\r')) & before; m != 0 {
			lastNL = j + (63-bits.LeadingZeros64(m))>>3 + 1
		}
		if un != 0 {
			return j + int(end>>3), last, lastNL
		}
		carry = nbsp>>56 | ideo>>48 | ideo>>56
	}
	if carry != 0 { // j is inside the last character read: go on from its start
		return last, last, lastNL
	}
	return j, last, lastNL
}

// asciiSpace tells spaces which ASCII bytes are white space: spaceNL for \r and \n, 1 for the
// others, 0 for the rest.
var asciiSpace = func() (t [128]uint8) {
	for b := range t {
		if asciiClass[b]&cWS != 0 {
			t[b] = 1
		}
	}
	t['\r'], t['\n'] = spaceNL, spaceNL
	return
}()

const spaceNL = 2

func isASCIILetter(b byte) bool { return (b|0x20)-'a' < 26 }

// lowerRun8 returns where the run of ASCII lowercase letters (of either case, with fold 0x20)
// in s from k ends, or the first place from which fewer than eight bytes are left if it goes
// on that far, for the byte loop to finish: eight bytes at a time (runOut).
func lowerRun8(s string, k int, fold byte) int {
	for ; k+8 <= len(s); k += 8 {
		if out := runOut(le64(unsafe.Pointer(unsafe.StringData(s[k:]))), 'a', 'z', fold); out != 0 {
			return k + bits.TrailingZeros64(out)>>3
		}
	}
	return k
}

// runOut returns the high bit of each byte of w that is out of the range lo..hi (ASCII, lo >
// 0x20) once ORed with fold (0 or 0x20). The split reads runs of ASCII letters eight bytes at
// a time with it: for the few letters of a word that costs about as many instructions as a
// loop over the bytes, and the end of the run, found by counting zeros, costs no branch to
// mispredict. For a byte x below 0x80, x + 0x80-lo has its high bit set if and only if x >=
// lo, and x + 0x7F-hi if and only if x > hi, with no carry out of the byte; a byte of 0x80 or
// more is out by its own high bit, and a carry out of it reaches only the bytes above it, so
// the lowest byte out is always found.
func runOut(w uint64, lo, hi, fold byte) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	w |= ones * uint64(fold)
	return (^((w + ones*uint64(0x80-lo)) &^ (w + ones*uint64(0x7F-hi))) | w) & highs
}

// splitCL100K returns the end of the cl100k_base piece starting at i.
func splitCL100K(s string, i int) int {
	b := s[i]
	if b == '\'' {
		if n := contraction(s, i); n > 0 {
			return i + n
		}
	}
	// Fast path: [^\r\n\p{L}\p{N}]?\p{L}+ over ASCII letters, decided if the run ends on ASCII.
	j := i
	if b < 0x80 && asciiClass[b]&(cL|cN) == 0 && !isCRLF(b) && i+1 < len(s) {
		j = i + 1
	}
	if j < len(s) && isASCIILetter(s[j]) {
		k := lowerRun8(s, j+1, 0x20)
		for k < len(s) && isASCIILetter(s[k]) {
			k++
		}
		if k == len(s) || s[k] < 0x80 {
			return k
		}
	}
	c, n := asciiClass[b], 1 // classAt, inline
	if b >= 0x80 {
		c, n = classWide(s[i:])
	}
	if c&cL != 0 {
		return scan(s, i+n, cL)
	}
	if c&cN != 0 {
		return numbers(s, i)
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+ with the prefix.
	if !isCRLF(b) && i+n < len(s) {
		b1 := s[i+n]
		c1, n1 := asciiClass[b1], 1
		if b1 >= 0x80 {
			c1, n1 = classWide(s[i+n:])
		}
		if c1&cL != 0 {
			return scan(s, i+n+n1, cL)
		}
	}
	//  ?[^\s\p{L}\p{N}]+[\r\n]*
	j = -1
	if c&cWS == 0 {
		j = scanOther(s, i+n)
	} else if b == ' ' && i+1 < len(s) {
		if c1, n1 := classAt(s, i+1); c1&(cWS|cL|cN) == 0 {
			j = scanOther(s, i+1+n1)
		}
	}
	if j >= 0 {
		for j < len(s) && isCRLF(s[j]) {
			j++
		}
		return j
	}
	return spaces(s, i)
}

// lettersO200K matches [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+ (first=true)
// or [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]* (first=false) at j, each
// followed by the optional contraction; it returns the end or -1.
func lettersO200K(s string, j int, first bool) int {
	lowEnd := -1 // end of the last lower-class character inside the upper-class run
	k := j
	c := uint8(0)
	for k < len(s) {
		n := 1
		if b := s[k]; b < 0x80 {
			c = asciiClass[b]
		} else {
			c, n = classWide(s[k:])
		}
		if c&cUpper == 0 {
			break
		}
		k += n
		if c&cLower != 0 {
			lowEnd = k
		}
	}
	// Here c is the class of the character at k, if any.
	end := -1
	if k < len(s) && c&cLower != 0 {
		end = scan(s, k, cLower)
	} else if first {
		end = lowEnd // U* backs off to the last lower-class character of the run
	} else if k > j {
		end = k
	}
	if end < 0 {
		return -1
	}
	if end < len(s) && s[end] == '\'' {
		end += contraction(s, end)
	}
	return end
}

// splitO200K returns the end of the o200k_base piece starting at i.
func splitO200K(s string, i int) int {
	b := s[i]
	// Fast path: an optional prefix, then ASCII letters, decided if they end on ASCII. Then
	// [A-Z]*[a-z]* is the whole match of the first alternative (with lowercase letters) or of
	// the second (without), both followed by the optional contraction.
	j := i
	if b < 0x80 && asciiClass[b]&(cL|cN) == 0 && !isCRLF(b) && i+1 < len(s) {
		j = i + 1
	}
	if j < len(s) && isASCIILetter(s[j]) {
		k := j
		for k < len(s) && s[k]-'A' < 26 {
			k++
		}
		k = lowerRun8(s, k, 0)
		for k < len(s) && s[k]-'a' < 26 {
			k++
		}
		if k == len(s) || s[k] < 0x80 {
			if k < len(s) && s[k] == '\'' {
				k += contraction(s, k)
			}
			return k
		}
	}
	c, n := classAt(s, i)
	if c&(cUpper|cLower) != 0 { // a letter or a mark: the first two alternatives
		prefix := c&cL == 0 && i+n < len(s) // a mark may be the optional prefix
		if prefix {
			if e := lettersO200K(s, i+n, true); e >= 0 {
				return e
			}
		}
		if e := lettersO200K(s, i, true); e >= 0 {
			return e
		}
		if prefix {
			if e := lettersO200K(s, i+n, false); e >= 0 {
				return e
			}
		}
		return lettersO200K(s, i, false) // cannot fail: s[i] is upper- or lower-class
	}
	if c&cN != 0 {
		return numbers(s, i)
	}
	// The prefix [^\r\n\p{L}\p{N}] (here: anything but \r, \n) before letters.
	if !isCRLF(b) && i+n < len(s) {
		if e := lettersO200K(s, i+n, true); e >= 0 {
			return e
		}
		if e := lettersO200K(s, i+n, false); e >= 0 {
			return e
		}
	}
	//  ?[^\s\p{L}\p{N}]+[\r\n/]*
	j = -1
	if c&cWS == 0 {
		j = scanOther(s, i+n)
	} else if b == ' ' && i+1 < len(s) {
		if c1, n1 := classAt(s, i+1); c1&(cWS|cL|cN) == 0 {
			j = scanOther(s, i+1+n1)
		}
	}
	if j >= 0 {
		for j < len(s) && (isCRLF(s[j]) || s[j] == '/') {
			j++
		}
		return j
	}
	return spaces(s, i)
}
