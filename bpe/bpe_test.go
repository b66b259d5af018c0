package bpe

import (
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

// naiveMerge is tiktoken's _byte_pair_merge transcribed as plainly as possible, with no
// length limit: the reference for both merge implementations.
func naiveMerge(v *vocab, p string) []int {
	type part struct {
		start int
		rank  uint32
	}
	get := func(parts []part, i int) uint32 {
		if i+3 < len(parts) {
			return v.rank(p[parts[i].start:parts[i+3].start])
		}
		return noRank
	}
	parts := make([]part, 0, len(p)+1)
	for i := 0; i < len(p)-1; i++ {
		parts = append(parts, part{i, v.rank(p[i : i+2])})
	}
	parts = append(parts, part{len(p) - 1, noRank}, part{len(p), noRank})
	for {
		m, mi := noRank, -1
		for i, pt := range parts[:len(parts)-1] {
			if pt.rank < m {
				m, mi = pt.rank, i
			}
		}
		if mi < 0 {
			break
		}
		if mi > 0 {
			parts[mi-1].rank = get(parts, mi-1)
		}
		parts[mi].rank = get(parts, mi)
		parts = slices.Delete(parts, mi+1, mi+2)
	}
	var ids []int
	for i := 0; i < len(parts)-1; i++ {
		ids = append(ids, int(v.rank(p[parts[i].start:parts[i+1].start])))
	}
	return ids
}

// randomPiece makes a piece of n bytes from words and letters, so that merges happen.
func randomPiece(rng *rand.Rand, n int) string {
	frags := []string{"a", "e", "in", "the", "ing", "tion", "s", "x", "q", "zz", "aa", "\xc3", "\xa9", "é", "中", "0", " "}
	var sb strings.Builder
	for sb.Len() < n {
		if rng.IntN(3) == 0 {
			sb.WriteByte(byte('a' + rng.IntN(26)))
		} else {
			sb.WriteString(frags[rng.IntN(len(frags))])
		}
	}
	return sb.String()[:n]
}

// TestMergeImplementations checks that the scan merge, the heap merge and the tree merge
// agree with the plain transcription of tiktoken's merge.
func TestMergeImplementations(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	sc := new(scratch)
	for _, name := range Names() {
		v := mustGet(t, name).v
		for it := 0; it < 20000; it++ {
			n := 2 + rng.IntN(blockMax-1)
			if it%10 == 0 {
				n = 2 + rng.IntN(1023)
			}
			p := randomPiece(rng, n)
			want := naiveMerge(v, p)
			got, k := v.mergeLong(p, sc, []int{})
			if !slices.Equal(got, want) || k != len(want) {
				t.Fatalf("%s mergeLong(%q) = %v (%d), want %v", name, p, got, k, want)
			}
			if n <= blocksLongMax {
				if got := v.mergeBlocksLong(p, sc, nil); !slices.Equal(intsOf(got), want) {
					t.Fatalf("%s mergeBlocksLong(%q) = %v, want %v", name, p, got, want)
				}
			}
			if n <= blockMax {
				var toks [blockMax]uint32
				k := v.mergeBlocks(p, &toks, nil)
				if got := toks[:k]; !slices.Equal(intsOf(got), want) {
					t.Fatalf("%s mergeBlocks(%q) = %v, want %v", name, p, got, want)
				}
				k = v.mergeBlocks(p, &toks, sc) // ranks of pairs from sc's cache
				if got := toks[:k]; !slices.Equal(intsOf(got), want) {
					t.Fatalf("%s mergeBlocks(%q, scratch) = %v, want %v", name, p, got, want)
				}
			}
			if n <= smallPiece {
				got, k = v.mergeSmall(p, []int{})
				if !slices.Equal(got, want) || k != len(want) {
					t.Fatalf("%s mergeSmall(%q) = %v (%d), want %v", name, p, got, k, want)
				}
			}
		}
	}
}

// TestLongWord checks a 64 KiB word against the reference merge on both encodings (a run of
// letters is a single piece) and against the same word cut where the cut cannot matter.
func TestLongWord(t *testing.T) {
	word := longWord(1 << 16)
	for _, name := range Names() {
		e := mustGet(t, name)
		ids := e.Encode(word)
		if string(e.Decode(ids)) != word || e.Count(word) != len(ids) {
			t.Fatalf("%s: 64 KiB word does not round-trip", name)
		}
		if w := word[:4096]; !slices.Equal(e.Encode(w), naiveMerge(e.v, w)) {
			t.Fatalf("%s: 4 KiB word differs from the reference merge", name)
		}
	}
	for _, name := range Names() {
		e := mustGet(t, name)
		for _, s := range []string{strings.Repeat("a", 5000), strings.Repeat("ab", 3000), strings.Repeat("é", 2000)} {
			if got, want := e.Encode(s), naiveMerge(e.v, s); !slices.Equal(got, want) {
				t.Fatalf("%s: %q... differs from the reference merge", name, s[:10])
			}
		}
	}
}

// longWord returns n bytes of pseudo-random lowercase letters: one piece for both encodings.
func longWord(n int) string {
	rng := rand.New(rand.NewPCG(5, 6))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + rng.IntN(26))
	}
	return string(b)
}

func TestCountAllocatesNothing(t *testing.T) {
	text := strings.Repeat("Hello, world! It's 2026-09-19T12:00:00Z; func main() { return x }\n", 50) +
		longWord(3000) + " " + strings.Repeat("€", 100)
	for _, name := range Names() {
		e := mustGet(t, name)
		e.Count(text)
		if a := testing.AllocsPerRun(20, func() { e.Count(text) }); a != 0 {
			t.Errorf("%s: Count allocates %v times per call", name, a)
		}
	}
}

func TestAPI(t *testing.T) {
	if _, err := Get("p50k_base"); err == nil {
		t.Fatal("Get(p50k_base): no error")
	}
	a, _ := Get("o200k_base")
	b, _ := Get("o200k_base")
	if a != b || a.Name() != "o200k_base" {
		t.Fatal("Get does not return one *Encoding per name")
	}
	if got := a.Encode(""); got == nil || len(got) != 0 || a.Count("") != 0 {
		t.Fatalf("Encode(\"\") = %#v", got)
	}
	if got := string(a.Decode([]int{24912, 199999, 2375, -5, 1 << 30})); got != "hello<|endoftext|> world" {
		t.Fatalf("Decode = %q", got)
	}
	c, _ := Get("cl100k_base")
	if got := string(c.Decode([]int{100257, 100276})); got != "<|endoftext|><|endofprompt|>" {
		t.Fatalf("Decode = %q", got)
	}
	if !slices.Equal(Names(), []string{"o200k_base", "cl100k_base"}) {
		t.Fatal(Names())
	}
}

// TestInvalidUTF8 pins the documented behaviour: an invalid byte is a character of its own
// that splits like U+FFFD and is encoded as its own byte.
func TestInvalidUTF8(t *testing.T) {
	for _, name := range Names() {
		e := mustGet(t, name)
		for _, s := range []string{"\xff", "a\xffb", "\xe2\x82", "it's\xc3", "\x80\x80\x80"} {
			ids := e.Encode(s)
			if string(e.Decode(ids)) != s {
				t.Errorf("%s %q: does not round-trip", name, s)
			}
		}
		// "a\xffb" splits like "a\ufffdb": "a", then the other character as the prefix of "b".
		if got := pieces(name, "a\xffb"); !slices.Equal(got, []string{"a", "\xffb"}) {
			t.Errorf("%s: pieces(a\\xffb) = %q", name, got)
		}
	}
}

func TestConcurrent(t *testing.T) {
	// A long word and a long run of mixed white space: cut pieces, whose tables (cut.go,
	// units.go) the goroutines share.
	text := strings.Repeat("The quick brown fox. ", 200) + longWord(5000) + randomFrom(9, 5000, " ", "\t", "\u00a0", "\u3000", "  ") + "."
	var wg sync.WaitGroup
	for _, name := range Names() {
		want := mustGet(t, name).Encode(text)
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e, err := Get(name)
				if err != nil {
					t.Error(err)
					return
				}
				for k := 0; k < 20; k++ {
					if got := e.Encode(text); !slices.Equal(got, want) || e.Count(text) != len(want) {
						t.Error("concurrent Encode differs")
						return
					}
				}
			}()
		}
	}
	wg.Wait()
}

// TestChunkedMerge checks the chunked merge of very long pieces against the one-run merge on
// texts that make junctions fail in different ways (runs of one byte, short periods, random
// letters, bytes, digits, UTF-8).
func TestChunkedMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	gens := map[string]func(n int) string{
		"letters": func(n int) string { return longWord(n) },
		"a":       func(n int) string { return strings.Repeat("a", n) },
		"ab":      func(n int) string { return strings.Repeat("ab", n/2) },
		"abc":     func(n int) string { return strings.Repeat("abc", n/3) },
		"aab":     func(n int) string { return strings.Repeat("aab", n/3) },
		"period7": func(n int) string { return strings.Repeat("ingthe ", n/7) },
		"bytes": func(n int) string {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(rng.IntN(256))
			}
			return string(b)
		},
		"fragments": func(n int) string { return randomPiece(rng, n) },
		"é":         func(n int) string { return strings.Repeat("é", n/2) },
		"zz-ish": func(n int) string {
			b := make([]byte, n)
			for i := range b {
				b[i] = "zq"[rng.IntN(2)]
			}
			return string(b)
		},
	}
	sc := new(scratch)
	for _, name := range Names() {
		v := mustGet(t, name).v
		for gname, gen := range gens {
			for _, n := range []int{chunkedPiece, 3*window + 17, 20000, 65536} {
				p := gen(n)
				if len(p) < chunkedPiece {
					p += gen(chunkedPiece)
				}
				want, wn := v.mergeLong(p, sc, []int{})
				got, gn := v.mergeChunked(p, sc, []int{})
				if !slices.Equal(got, want) || gn != wn {
					t.Fatalf("%s %s %d: chunked merge differs (%d vs %d tokens)", name, gname, len(p), gn, wn)
				}
			}
		}
	}
}

// TestJunctionProof checks the claim junctionOK rests on, at random cuts of random texts:
// whenever it passes, the whole piece merges to the left run's tokens followed by the right
// run's. (It may fail when they would agree anyway; that only costs time.)
func TestJunctionProof(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	alphabets := []string{"ab", "abc", "aab", "etaoinshr", "abcdefghijklmnopqrstuvwxyz", "in the ", "0123456789", "é中 a"}
	sc := new(scratch)
	for _, name := range Names() {
		v := mustGet(t, name).v
		pass, fail := 0, 0
		for it := 0; it < 6000; it++ {
			var p string
			if it%3 == 0 {
				p = randomPiece(rng, 4+rng.IntN(400))
			} else {
				a := alphabets[rng.IntN(len(alphabets))]
				var sb strings.Builder
				for n := 4 + rng.IntN(400); sb.Len() < n; {
					sb.WriteByte(a[rng.IntN(len(a))])
				}
				p = sb.String()
			}
			x := 2 + rng.IntN(len(p)-3) // both sides have at least 2 bytes
			sc.seq = sc.seq[:0]
			left := v.run(p, 0, x, sc, nil, &sc.seq)
			nl := len(sc.seq)
			right := v.run(p, x, len(p), sc, nil, &sc.seq)
			if !v.junction(p, x, 0, sc.seq[:nl], sc.seq[nl:]) {
				fail++
				continue
			}
			pass++
			whole, _ := v.mergeLong(p, sc, []int{})
			var cat []int
			for _, tk := range append(left, right...) {
				cat = append(cat, int(tk))
			}
			if !slices.Equal(whole, cat) {
				t.Fatalf("%s: junctionOK at %d of %q, but the whole piece merges differently", name, x, p)
			}
		}
		t.Logf("%s: %d junctions proved, %d not", name, pass, fail)
		if pass == 0 || fail == 0 {
			t.Errorf("%s: the test does not exercise both outcomes", name)
		}
	}
}

func intsOf(toks []uint32) []int {
	out := make([]int, len(toks))
	for i, t := range toks {
		out[i] = int(t)
	}
	return out
}

// TestCandidateFilter checks that the filters of the cut pieces' merges let every token of
// three bytes or more through to its own rank, and that they rule most strings that are no
// token out: random strings of 3 to 12 bytes, tokens' prefixes or letters alike.
func TestCandidateFilter(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, name := range Names() {
		v := mustGet(t, name).v
		c := v.cuts()
		tokens := 0
		for r := 0; r < v.n; r++ {
			tok := v.token(uint32(r))
			if len(tok) < 3 {
				continue
			}
			tokens++
			if got := v.filteredRankAt(c, unsafe.Pointer(unsafe.StringData(tok)), len(tok)); got != uint32(r) {
				t.Fatalf("%s: filteredRankAt(%q) = %d, want its rank %d", name, tok, int32(got), r)
			}
		}
		passed, asked := 0, 0
		for range 100_000 {
			b := make([]byte, 3+rng.IntN(10))
			for i := range b {
				b[i] = "abcdefghijklmnopqrstuvwxyz \t\n"[rng.IntN(29)]
			}
			if v.rank(string(b)) != noRank {
				continue
			}
			asked++
			if v.filteredRankAt(c, unsafe.Pointer(&b[0]), len(b)) != noRank {
				t.Fatalf("%s: filteredRankAt(%q) is a rank, but it is no token", name, b)
			}
			h, e := candHash(unsafe.Pointer(&b[0]), len(b))
			if c.head[h>>6]>>(h&63)&(c.tail[e>>6]>>(e&63))&1 != 0 {
				passed++
			}
		}
		t.Logf("%s: %d tokens of 3 bytes or more pass; %d of %d strings that are no token pass", name, tokens, passed, asked)
		if tokens < 50_000 || passed*10 > asked {
			t.Fatalf("%s: %d tokens of 3 bytes or more; the filters passed %d of %d strings that are no token (want under a tenth)", name, tokens, passed, asked)
		}
	}
}

// TestCutMerge checks the cut merge (cut.go) against the same pieces merged in one run
// (mergeLong, itself checked against tiktoken's merge in TestMergeImplementations), on
// texts with many cuts, few cuts and none, and that it really cuts.
func TestCutMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	alphabets := []string{"ab", "aab", "etaoinshr", "abcdefghijklmnopqrstuvwxyz", "aBcDeFgHiJ",
		" \t\n", "!\"#$%&()*+,-./:;<=>?@[]^_`{|}~", "0123456789", "é中 a\u3000\u00a0", "\x80\xbf\xc3\xe2"}
	sc := new(scratch)
	for _, name := range Names() {
		v := mustGet(t, name).v
		cuts := 0
		for it := 0; it < 3000; it++ {
			var p string
			n := cutPiece + rng.IntN(3000)
			if it%5 == 0 {
				p = randomPiece(rng, n)
			} else {
				a := alphabets[rng.IntN(len(alphabets))]
				var sb strings.Builder
				for sb.Len() < n {
					sb.WriteByte(a[rng.IntN(len(a))])
				}
				p = sb.String()
			}
			want, wn := v.mergeLong(p, sc, []int{})
			filtersFirstStart = it%2 == 1 // the merges read the filters first from the start
			var m merger
			got, gn := v.mergeCut(p, []int{}, &m)
			m.release()
			filtersFirstStart = false
			if !slices.Equal(got, want) || gn != wn {
				t.Fatalf("%s: mergeCut(%q) = %d tokens, want %d (one run)", name, p, gn, wn)
			}
			c := v.cuts()
			for x := 2; x+1 < len(p); x++ {
				if !c.hasPair(p[x-1], p[x]) && !c.hasTri(p[x-2], p[x-1], p[x]) && !c.hasTri(p[x-1], p[x], p[x+1]) {
					cuts++
				}
			}
		}
		if cuts == 0 {
			t.Errorf("%s: no text was cut", name)
		}
	}
}

// FuzzCutMerge compares the cut merge with the one-run merge on any bytes, repeated up to
// the length at which pieces are cut, with the merges reading the cache of token pairs first
// and reading the filters first.
func FuzzCutMerge(f *testing.F) {
	for _, s := range []string{"abc", "a b\tc", "q!z", "é中", "\xff\x80a", "ingthe"} {
		f.Add(s)
	}
	sc := new(scratch)
	f.Fuzz(func(t *testing.T, s string) {
		if s == "" {
			return
		}
		p := s
		for len(p) < cutPiece {
			p += s
		}
		for _, name := range Names() {
			v := mustGet(t, name).v
			want, wn := v.mergeLong(p, sc, []int{})
			for _, first := range []bool{false, true} {
				filtersFirstStart = first
				var m merger
				got, gn := v.mergeCut(p, []int{}, &m)
				m.release()
				filtersFirstStart = false
				if !slices.Equal(got, want) || gn != wn {
					t.Fatalf("%s: mergeCut(%q) (filters first: %v) = %v, want %v (one run)", name, p, first, got, want)
				}
			}
		}
	})
}

// TestCountPiece checks Count's own lookup of short pieces (countPiece): every token of 3 to
// 8 bytes is found as a token, without merging (the merger is never asked for a scratch), and
// pieces that are no token count as their merge does.
func TestCountPiece(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, name := range Names() {
		v := mustGet(t, name).v
		found := 0
		for r := 0; r < v.n; r++ {
			tok := v.token(uint32(r))
			if len(tok) < 3 || len(tok) > 8 {
				continue
			}
			var m merger
			if k := v.countPiece(tok, &m); k != 1 || m.sc != nil {
				t.Fatalf("%s: countPiece(token %d %q) = %d (merged: %v), want 1 by lookup", name, r, tok, k, m.sc != nil)
			}
			found++
		}
		for it := 0; it < 20000; it++ {
			p := randomPiece(rng, 3+rng.IntN(30))
			var m merger
			got := v.countPiece(p, &m)
			m.release()
			if want := naiveMerge(v, p); got != len(want) {
				t.Fatalf("%s: countPiece(%q) = %d, want %d", name, p, got, len(want))
			}
		}
		t.Logf("%s: %d tokens of 3-8 bytes found by lookup", name, found)
	}
}
