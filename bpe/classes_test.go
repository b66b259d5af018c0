package bpe

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// inputClass is one kind of input whose per-byte cost must stay close to ordinary text's:
// the worst cases of the split patterns and the merge.
type inputClass struct {
	name string
	gen  func(n int) string // n bytes (give or take a character) of the class
}

// inputClasses lists the input classes the benchmarks and the long-run tests use. Each makes
// deterministic text.
var inputClasses = []inputClass{
	{"spaces", func(n int) string { return strings.Repeat(" ", n) }},
	{"newlines", func(n int) string { return strings.Repeat("\n", n) }},
	{"whitespace", func(n int) string { return randomFrom(11, n, " ", " ", " ", "\t", "\n", "\r\n", "\u00a0", "\u3000") }},
	{"letter", func(n int) string { return strings.Repeat("a", n) }},
	{"letters", func(n int) string { return randomFrom(12, n, strings.Split("abcdefghijklmnopqrstuvwxyz", "")...) }},
	{"Letters", func(n int) string {
		return randomFrom(13, n, strings.Split("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", "")...)
	}},
	{"digits", func(n int) string { return randomFrom(14, n, strings.Split("0123456789", "")...) }},
	{"punctuation", func(n int) string { return randomFrom(15, n, strings.Split("!\"#$%&()*+,-./:;<=>?@[]^_`{|}~", "")...) }},
	{"cjk", func(n int) string { return randomRunes(16, n, 0x4E00, 0x9FFF) }},
	{"emoji", func(n int) string { return randomRunes(17, n, 0x1F300, 0x1FAFF) }},
	{"invalid", func(n int) string { return randomBytes(18, n, 0x80, 0xFF) }},
	{"bytes", func(n int) string { return randomBytes(19, n, 0, 0xFF) }},
}

func randomFrom(seed uint64, n int, alphabet ...string) string {
	rng := rand.New(rand.NewPCG(seed, 1))
	var sb strings.Builder
	sb.Grow(n + 8)
	for sb.Len() < n {
		sb.WriteString(alphabet[rng.IntN(len(alphabet))])
	}
	return sb.String()
}

func randomRunes(seed uint64, n int, lo, hi rune) string {
	rng := rand.New(rand.NewPCG(seed, 2))
	b := make([]byte, 0, n+4)
	for len(b) < n {
		b = utf8.AppendRune(b, lo+rune(rng.IntN(int(hi-lo+1))))
	}
	return string(b)
}

func randomBytes(seed uint64, n int, lo, hi byte) string {
	rng := rand.New(rand.NewPCG(seed, 3))
	b := make([]byte, n)
	for i := range b {
		b[i] = lo + byte(rng.IntN(int(hi-lo)+1))
	}
	return string(b)
}

// TestLongRuns checks long runs of every input class: 3 KB of each against tiktoken-go
// (independent: its own regex pre-tokenizer and tiktoken's quadratic merge), where it can
// judge, and 200 KB of each, which go through the chunked merge, against the same pieces
// each merged in one run (mergeLong, itself checked against tiktoken's merge transcribed in
// TestMergeImplementations).
func TestLongRuns(t *testing.T) {
	for _, name := range Names() {
		e := mustGet(t, name)
		ref := reference(t, name)
		sc := new(scratch)
		for _, c := range inputClasses {
			short := c.gen(3000)
			if refComparableLong(short) {
				if got, want := e.Encode(short), ref.EncodeOrdinary(short); !slices.Equal(got, want) {
					t.Errorf("%s %s: 3 KB differ from tiktoken-go (%d tokens, want %d)", name, c.name, len(got), len(want))
				}
			}
			long := c.gen(200 << 10)
			want := []int{} // not nil: the merges append only to a slice
			for i := 0; i < len(long); {
				j := e.split(long, i)
				if r := e.v.rank(long[i:j]); r != noRank {
					want = append(want, int(r))
				} else if j-i <= smallPiece {
					want, _ = e.v.mergeSmall(long[i:j], want)
				} else {
					want, _ = e.v.mergeLong(long[i:j], sc, want)
				}
				i = j
			}
			if got := e.Encode(long); !slices.Equal(got, want) {
				t.Errorf("%s %s: 200 KB differ from the one-run merge (%d tokens, want %d)", name, c.name, len(got), len(want))
			}
			if n := e.Count(long); n != len(want) {
				t.Errorf("%s %s: Count = %d, want %d", name, c.name, n, len(want))
			}
		}
	}
}

// refComparableLong is refComparable without its length limit: the classes' texts are long
// but their pieces are runs tiktoken-go merges in reasonable time at 3 KB.
func refComparableLong(s string) bool { return utf8.ValidString(s) && goUnicodeAgrees(s) }
