// Package casefold folds text the way a (?i) regular expression of Go's regexp matches ASCII
// letters, so that a cheap search for lower-case ASCII stems can stand in front of such an
// expression without ever missing one of its matches.
package casefold

import "unicode/utf8"

// Append appends s to dst folded: ASCII capitals lowered, the Kelvin sign (U+212A, which (?i)
// matches as k) written k and the long s (U+017F, matched as s) written s, every other rune
// kept as UTF-8 (U+FFFD for a byte that is not UTF-8, as ranging over a string gives). A
// byte outside ASCII is never part of an ASCII stem, so a stem found in the result is one the
// expression's letters can match.
func Append(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case 0x212A: // Kelvin sign
			dst = append(dst, 'k')
		case 0x017F: // long s
			dst = append(dst, 's')
		default:
			dst = utf8.AppendRune(dst, r)
		}
		i += size
	}
	return dst
}
