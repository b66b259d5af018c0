// Package fulltext turns a search query into plain words, and plain words into the query
// languages of the two stores' full-text indexes (SQLite FTS5 and PostgreSQL tsquery), so that
// nothing a user types is read as query syntax: a quote, a star, NEAR(, a minus, a colon or
// the word OR only separate words or are words. A message matches when it holds any of the
// words; the stores rank those holding more of them, and rarer ones, first.
//
// Words are what both indexes index: runs of Unicode letters and numbers, lower-cased
// (SQLite's unicode61 tokenizer without diacritic folding, PostgreSQL's simple configuration).
package fulltext

import (
	"strings"
	"unicode"
)

// MaxWords is how many distinct words of a query count; the rest are ignored.
const MaxWords = 16

// isWordRune is a rune that a word is made of.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r)
}

// Words splits q into its distinct lower-case words, in the order they first appear, at most
// MaxWords of them. Invalid UTF-8 separates words.
func Words(q string) []string { return split(q, MaxWords) }

// split is Words with a bound of max words (max < 0: none).
func split(q string, max int) []string {
	var out []string
	seen := map[string]bool{}
	for len(q) > 0 && (max < 0 || len(out) < max) {
		i := strings.IndexFunc(q, isWordRune)
		if i < 0 {
			break
		}
		q = q[i:]
		j := strings.IndexFunc(q, func(r rune) bool { return !isWordRune(r) })
		if j < 0 {
			j = len(q)
		}
		w := strings.ToLower(q[:j])
		q = q[j:]
		if w == "" || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// clean keeps, of words, only those that are words as Words splits them (a caller's list is
// not trusted to be), so that the query languages below never see a character of their syntax.
func clean(words []string) []string {
	var out []string
	for _, w := range words {
		if ws := Words(w); len(ws) == 1 && ws[0] == w {
			out = append(out, w)
		}
	}
	return out
}

// FTS5 is the FTS5 MATCH expression for any of words: each a quoted string, joined by OR
// (`"redis" OR "limiter"`). "" when no word is left, which the caller must not run.
func FTS5(words []string) string {
	words = clean(words)
	for i, w := range words {
		words[i] = `"` + w + `"`
	}
	return strings.Join(words, " OR ")
}

// TSQuery is the to_tsquery text for any of words: each a quoted lexeme, joined by |
// (`'redis' | 'limiter'`). "" when no word is left, which the caller must not run.
func TSQuery(words []string) string {
	words = clean(words)
	for i, w := range words {
		words[i] = "'" + w + "'"
	}
	return strings.Join(words, " | ")
}

// Holds reports whether text holds one of words (as Words splits text).
func Holds(text string, words []string) bool {
	for _, w := range split(text, -1) {
		for _, q := range words {
			if w == q {
				return true
			}
		}
	}
	return false
}
