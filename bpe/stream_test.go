package bpe

import (
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// piecesOf returns the pieces of s under the encoding's split pattern.
func piecesOf(e *Encoding, s string) []string {
	var out []string
	for i := 0; i < len(s); {
		j := e.split(s, i)
		out = append(out, s[i:j])
		i = j
	}
	return out
}

// checkCuts checks, at every safe cut x of s, that s[:x] and s[x:] split into the pieces
// of s, and therefore count the same.
func checkCuts(t *testing.T, s string) int {
	t.Helper()
	cuts := 0
	for _, name := range Names() {
		e := mustGet(t, name)
		whole := piecesOf(e, s)
		for x := 1; x < len(s); x++ {
			if safeCutFrom([]byte(s[:x+1]), x) != x {
				continue
			}
			cuts++
			if got := append(piecesOf(e, s[:x]), piecesOf(e, s[x:])...); !slices.Equal(got, whole) {
				t.Fatalf("%s: cutting %q at %d changes the pieces:\n got  %q\n want %q", name, s, x, got, whole)
			}
		}
	}
	return cuts
}

// streamFragments make texts whose safe cuts sit next to everything that could spoil them.
var streamFragments = []string{
	"\n", "\r\n", "\n\n", " ", "  ", "\t", "/", "//", "a", "Z", "word", "WORD", "It's", "'s", "'S", "9", "123",
	"é", "É", "中文", "ᵃ", "\u0301", "😀", "\u00a0", "\u3000", "\u2028", "\x85", "\xc2\x85", "\xff", "\xe4\xb8",
	".", "!", "{", "}", "\"", "-", "_", "~", "\x7f", "<|endoftext|>",
}

func randomStreamText(rng *rand.Rand, n int) string {
	var sb strings.Builder
	for sb.Len() < n {
		sb.WriteString(streamFragments[rng.IntN(len(streamFragments))])
	}
	return sb.String()
}

// TestSafeCut checks SafeCut's positions on random mixtures of the fragments that matter
// and on windows of the shared corpus.
func TestSafeCut(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	cuts := 0
	for range 300 {
		cuts += checkCuts(t, randomStreamText(rng, 200))
	}
	if cuts < 1000 {
		t.Fatalf("only %d safe cuts tried", cuts)
	}
	corpus := readCorpus(t)
	for range 200 {
		i := rng.IntN(len(corpus) - 2048)
		checkCuts(t, corpus[i:i+2048])
	}
	if SafeCut([]byte("no cut")) != 2 || SafeCut([]byte("   ")) != 0 || SafeCut([]byte("a\nb")) != 2 || SafeCut([]byte("a\n/")) != 0 {
		t.Fatal("SafeCut misses or invents a cut on a hand-worked case")
	}
}

// checkSafeCutFrom checks safeCutFrom(b, from), for every from, against the position by
// position search it shortens (isSafeCut at each position, from the end).
func checkSafeCutFrom(t *testing.T, s string) {
	t.Helper()
	b := []byte(s)
	for from := 0; from <= len(b); from++ {
		want := 0
		for x := len(b) - 1; x >= max(from, 1); x-- {
			if isSafeCut(b, x) {
				want = x
				break
			}
		}
		if got := safeCutFrom(b, from); got != want {
			t.Fatalf("safeCutFrom(%q, %d) = %d, want %d", s, from, got, want)
		}
	}
}

// TestSafeCutFrom checks the eight-at-a-time search on texts with cuts rare and frequent.
func TestSafeCutFrom(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	for range 300 {
		checkSafeCutFrom(t, randomStreamText(rng, 1+rng.IntN(80)))
		// Long stretches with no space or newline, a cut now and then.
		var sb strings.Builder
		for sb.Len() < 100 {
			sb.WriteString(strings.Repeat("x", rng.IntN(30)))
			sb.WriteString([]string{" ", "\n", "a ", "\nb", "\n/", "  ", "\n\n"}[rng.IntN(7)])
		}
		checkSafeCutFrom(t, sb.String())
	}
}

func FuzzSafeCut(f *testing.F) {
	rng := rand.New(rand.NewPCG(23, 24))
	for range 20 {
		f.Add(randomStreamText(rng, 64))
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 512 {
			return
		}
		checkCuts(t, s)
		checkSafeCutFrom(t, s)
		for _, name := range Names() {
			e := mustGet(t, name)
			n, size, err := e.CountReader(&chunkReader{s: s, rng: rand.New(rand.NewPCG(uint64(len(s)), 1))})
			if err != nil || size != int64(len(s)) || n != e.Count(s) {
				t.Fatalf("%s CountReader(%q) = %d, %d, %v; want %d, %d", name, s, n, size, err, e.Count(s), len(s))
			}
		}
	})
}

// chunkReader yields s in reads of random sizes, so that reads end inside runs of white
// space, words and UTF-8 sequences.
type chunkReader struct {
	s   string
	rng *rand.Rand
	max int
}

func (r *chunkReader) Read(b []byte) (int, error) {
	if len(r.s) == 0 {
		return 0, io.EOF
	}
	m := r.max
	if m == 0 {
		m = 64
	}
	n := copy(b[:min(len(b), 1+r.rng.IntN(m))], r.s)
	r.s = r.s[n:]
	return n, nil
}

// TestCountReader counts a generated text of several megabytes, read in pieces of random
// sizes, and compares with counting it whole: ordinary text, long runs of spaces and of
// newlines across the buffer, multi-byte characters, one long line.
func TestCountReader(t *testing.T) {
	corpus := readCorpus(t)
	rng := rand.New(rand.NewPCG(25, 26))
	var sb strings.Builder
	for sb.Len() < 6<<20 {
		switch rng.IntN(6) {
		case 0:
			sb.WriteString(strings.Repeat(" ", rng.IntN(3*streamBuffer)))
		case 1:
			sb.WriteString(strings.Repeat("\n", rng.IntN(streamBuffer)))
		case 2:
			sb.WriteString(strings.Repeat("é中😀", rng.IntN(streamBuffer/4)))
		case 3:
			sb.WriteString(randomStreamText(rng, rng.IntN(streamBuffer)))
		default:
			i := rng.IntN(len(corpus) / 2)
			sb.WriteString(corpus[i : i+rng.IntN(len(corpus)/2)])
		}
	}
	text := sb.String()
	for _, name := range Names() {
		e := mustGet(t, name)
		want := e.Count(text)
		got, size, err := e.CountReader(&chunkReader{s: text, rng: rng, max: 300000})
		if err != nil || got != want || size != int64(len(text)) {
			t.Fatalf("%s: CountReader = %d tokens, %d bytes, %v; counting whole: %d tokens, %d bytes", name, got, size, err, want, len(text))
		}
	}
}

// TestCountReaderMemory counts 24 MiB of text that has safe cuts and checks that what
// CountReader allocates does not grow with the input (a few buffers, not the text).
func TestCountReaderMemory(t *testing.T) {
	corpus := readCorpus(t)
	e := mustGet(t, "o200k_base")
	r := &repeatReader{s: corpus, left: 24 << 20}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	_, size, err := e.CountReader(r)
	runtime.ReadMemStats(&m1)
	if err != nil || size != 24<<20 {
		t.Fatalf("CountReader: %d bytes, %v", size, err)
	}
	if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 8<<20 {
		t.Fatalf("CountReader allocated %d bytes for 24 MiB of text: it does not stream", alloc)
	}
}

// repeatReader yields s again and again, left bytes in all.
type repeatReader struct {
	s    string
	off  int
	left int
}

func (r *repeatReader) Read(b []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	n := copy(b[:min(len(b), r.left)], r.s[r.off:])
	r.off = (r.off + n) % len(r.s)
	r.left -= n
	return n, nil
}
