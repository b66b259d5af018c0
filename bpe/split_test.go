package bpe

import (
	"math/bits"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"
)

// An oracle for the pre-tokenizers built on Go's regexp package, which matches leftmost-first
// like a backtracking engine and, like this package, reads an invalid UTF-8 byte as U+FFFD
// of width 1. tiktoken's patterns are used as they are, except that \s and \S are spelled
// out as Unicode White_Space (Go's \s is ASCII only) and the two alternatives that need a
// look-ahead, \s+(?!\S)|\s+, which come last, are applied by hand when the others fail.

const (
	ws    = `\t\n\v\f\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}`
	reWS  = `[` + ws + `]`
	notWS = `[^` + ws + `\p{L}\p{N}]` // [^\s\p{L}\p{N}]
)

var oracles = map[string]*regexp.Regexp{
	"cl100k_base": regexp.MustCompile(`^(?:` + strings.Join([]string{
		`(?i:'s|'t|'re|'ve|'m|'ll|'d)`,
		`[^\r\n\p{L}\p{N}]?\p{L}+`,
		`\p{N}{1,3}`,
		` ?` + notWS + `+[\r\n]*`,
		reWS + `*[\r\n]+`,
	}, "|") + `)`),
	"o200k_base": regexp.MustCompile(`^(?:` + strings.Join([]string{
		`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
		`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
		`\p{N}{1,3}`,
		` ?` + notWS + `+[\r\n/]*`,
		reWS + `*[\r\n]+`,
	}, "|") + `)`),
}

var reWSRun = regexp.MustCompile(`^` + reWS + `+`)

// oraclePieces splits s with the regexp oracle.
func oraclePieces(name, s string) []string {
	re := oracles[name]
	var pieces []string
	for i := 0; i < len(s); {
		m := re.FindStringIndex(s[i:])
		n := 0
		if m != nil && m[1] > 0 {
			n = m[1]
		} else if w := reWSRun.FindStringIndex(s[i:]); w != nil {
			// \s+(?!\S): the whole run at the end of the text, else the run less its last
			// character when that leaves one; \s+ otherwise.
			n = w[1]
			if i+n < len(s) {
				_, last := utf8.DecodeLastRuneInString(s[i : i+n])
				if n-last > 0 {
					n -= last
				}
			}
		}
		if n == 0 {
			panic("oracle: no match at " + s[i:])
		}
		pieces = append(pieces, s[i:i+n])
		i += n
	}
	return pieces
}

func splitFunc(name string) func(string, int) int {
	for _, e := range encodings {
		if e.name == name {
			return e.split
		}
	}
	panic(name)
}

func pieces(name, s string) []string {
	loadClasses()
	split := splitFunc(name)
	var ps []string
	for i := 0; i < len(s); {
		j := split(s, i)
		if j <= i || j > len(s) {
			panic("split did not advance")
		}
		ps = append(ps, s[i:j])
		i = j
	}
	return ps
}

// goUnicodeAgrees reports whether Go's unicode package (which Go's regexp uses) gives every
// character of s the class this package gives it: false when s has a character that Unicode
// 15.1 or 16.0 added and Go's version (15.0.0 in Go 1.26) does not know.
func goUnicodeAgrees(s string) bool {
	loadClasses()
	for i := 0; i < len(s); {
		c, n := classAt(s, i)
		r, _ := utf8.DecodeRuneInString(s[i:])
		if c != goClass(r) {
			return false
		}
		i += n
	}
	return true
}

func checkSplit(t *testing.T, s string) {
	t.Helper()
	if !goUnicodeAgrees(s) {
		return // the oracle would use older Unicode data; TestAgainstTiktokenJS covers these
	}
	for _, name := range Names() {
		if got, want := pieces(name, s), oraclePieces(name, s); !slices.Equal(got, want) {
			t.Fatalf("%s %q:\n got  %q\n want %q (regexp oracle)", name, s, got, want)
		}
	}
}

// TestSplitOracle compares the pre-tokenizers with the regexp oracle on the golden texts
// and on random strings drawn from characters of every class the patterns distinguish.
func TestSplitOracle(t *testing.T) {
	for _, file := range []string{"testdata/cases.jsonl", "testdata/tiktoken.jsonl"} {
		for _, c := range readCases(t, file) {
			checkSplit(t, c.Text)
		}
	}
	alphabet := []string{
		"a", "Z", "s", "S", "t", "e", "E", "l", "L", "d", "m", "r", "v", "'", "ſ", "K",
		"é", "É", "ǅ", "ʰ", "中", "\u0301", "\u0903", "\u20dd", "1", "٣", "½", "Ⅻ",
		" ", "  ", "\t", "\n", "\r", "\r\n", "\v", "\f", "\u0085", "\u00a0", "\u2028", "\u3000",
		"/", "!", ".", "_", "-", "\"", "{", "\u200d", "\ufeff", "\ufffd", "😀", "\U000e0067",
		"\xff", "\xc3", "\xe2\x82", "\x80",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var sb strings.Builder
	for n := 0; n < 30000; n++ {
		sb.Reset()
		for k := rng.IntN(12); k >= 0; k-- {
			sb.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		checkSplit(t, sb.String())
	}
}

// TestLongSpaceRuns compares the pre-tokenizers with the regexp oracle on long runs of white
// space, which spaces reads eight bytes at a time (spacesLong): every white space character,
// mixed at random, with pieces of NBSP and U+3000 and other characters among them now and
// then, and the run's end at every place of a word.
func TestLongSpaceRuns(t *testing.T) {
	spacesAll := []string{" ", " ", "\t", "\n", "\r", "\r\n", "\v", "\f", "\u00a0", "\u00a0", "\u3000", "\u3000",
		"\u0085", "\u1680", "\u2000", "\u2007", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f"}
	others := []string{"a", "Z", "1", ".", "中", "\xc2", "\xa0", "\xe3", "\xe3\x80", "\x80", "\xc2\xa1", "\xe3\x80\x81", "\x00", "\x1c", "\xff"}
	rng := rand.New(rand.NewPCG(3, 4))
	var sb strings.Builder
	for n := 0; n < 20000; n++ {
		sb.Reset()
		common := rng.IntN(2) == 0 // only the characters spacesLong reads itself
		for k := 16 + rng.IntN(80); k >= 0; k-- {
			if rng.IntN(40) == 0 {
				sb.WriteString(others[rng.IntN(len(others))])
			} else if common {
				sb.WriteString(spacesAll[rng.IntN(12)])
			} else {
				sb.WriteString(spacesAll[rng.IntN(len(spacesAll))])
			}
		}
		if rng.IntN(2) == 0 {
			sb.WriteString(others[rng.IntN(len(others))])
		}
		checkSplit(t, sb.String())
	}
}

// FuzzSplit compares the pre-tokenizers with the regexp oracle on any input, invalid UTF-8
// included.
func FuzzSplit(f *testing.F) {
	for _, c := range readCases(f, "testdata/tiktoken.jsonl") {
		f.Add(c.Text)
	}
	f.Add("a\xffb it'S\xc3")
	f.Fuzz(func(t *testing.T, s string) { checkSplit(t, s) })
}

// TestRunOut compares runOut with a test of each byte, for every byte value at every place
// of the word, the other bytes each time in and out of the range at random (a byte of 0x80 or
// more below the one tested must not hide it: only the lowest byte out counts, but each byte
// out below it must be found).
func TestRunOut(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, r := range []struct{ lo, hi, fold byte }{{'a', 'z', 0}, {'A', 'Z', 0}, {'a', 'z', 0x20}} {
		in := func(x byte) bool { return (x|r.fold) >= r.lo && (x|r.fold) <= r.hi }
		for place := range 8 {
			for x := range 256 {
				for range 16 {
					var b [8]byte
					for i := range b {
						b[i] = byte(rng.IntN(256))
						if rng.IntN(2) == 0 {
							b[i] = r.lo + byte(rng.IntN(int(r.hi-r.lo)+1))
						}
					}
					b[place] = byte(x)
					want := 8
					for i := range b {
						if !in(b[i]) {
							want = i
							break
						}
					}
					out := runOut(le64(unsafe.Pointer(&b[0])), r.lo, r.hi, r.fold)
					if got := bits.TrailingZeros64(out) >> 3; got != want {
						t.Fatalf("runOut(% x, %q..%q, fold %#x): first byte out %d, want %d", b, r.lo, r.hi, r.fold, got, want)
					}
				}
			}
		}
	}
}
