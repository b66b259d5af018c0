// Package spell finds the likely intended word behind a typo: the CLI's "did you mean", and
// the linters' suggestions for misspelt reserved words, AACP tasks and keys, and seat names.
package spell

import "strings"

// Nearest returns the name in names closest to s by Distance, ignoring case, when it is close
// enough to be a likely typo (at most two edits, and at most a third of the name's length, but
// always one); "" when none is.
func Nearest(s string, names []string) string {
	if len(s) > 64 {
		return "" // long strings are close to nothing, and the table would be large
	}
	best, bestD := "", 3
	for _, n := range names {
		d := Distance(strings.ToLower(s), strings.ToLower(n))
		if d < bestD && d <= max(1, len(n)/3) {
			best, bestD = n, d
		}
	}
	return best
}

// Distance is the optimal-string-alignment distance between a and b in runes: insertions,
// deletions, substitutions and transpositions of neighbours (FTECH is one step from FETCH)
// each cost 1.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
