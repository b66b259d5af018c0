package bpe

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestUnits checks mergeBlocks starting from units (as in the segments of a cut piece, reading
// the cache of token pairs first) against tiktoken's merge transcribed (naiveMerge), on short
// pieces drawn from alphabets where units are common: mixed white space, letters, punctuation,
// CJK and pieces of UTF-8. It also checks that units were found: the merges of random white
// space start from at most two thirds as many parts as bytes.
func TestUnits(t *testing.T) {
	alphabets := [][]string{
		{" ", " ", " ", "\t", "\n", "\r\n", "\u00a0", "\u3000"},
		strings.Split("abcdefghijklmnopqrstuvwxyz", ""),
		strings.Split("aBcDeFgHiJ ", ""),
		strings.Split("!\"#$%&()*+,-./:;<=>?@[]^_`{|}~", ""),
		{"中", "文", "字", "。", "、", "\u3000", "é", "\xe3", "\x80", "\xc2", "\xa0"},
		{"\x80", "\xbf", "\xc3", "\xe2", "\xe3", "\xa0", "\xc2", " ", "a"},
		{"a", "b"}, {"a", "a", "b"}, strings.Split("etaoinshr", ""), {" ", "\t", "\n"},
		nil, // each piece from a few bytes of its own, at random
	}
	rng := rand.New(rand.NewPCG(21, 22))
	for _, name := range Names() {
		v := mustGet(t, name).v
		sc := new(scratch)
		sc.cut, sc.units = v.cuts(), v.units()
		for a, alphabet := range alphabets {
			for it := 0; it < 5000; it++ {
				var sb strings.Builder
				n := 2 + rng.IntN(blockMax-1)
				if alphabet == nil {
					alphabet = make([]string, 2+rng.IntN(5))
					for i := range alphabet {
						alphabet[i] = string([]byte{byte(rng.IntN(256))})
					}
				}
				for sb.Len() < n {
					sb.WriteString(alphabet[rng.IntN(len(alphabet))])
				}
				if a == len(alphabets)-1 {
					alphabet = nil
				}
				p := sb.String()
				if len(p) > blockMax {
					p = p[:blockMax]
				}
				want := naiveMerge(v, p)
				var toks [blockMax]uint32
				k := v.mergeBlocks(p, &toks, sc)
				if got := intsOf(toks[:k]); !slices.Equal(got, want) {
					t.Fatalf("%s alphabet %d: mergeBlocks(%q) from units = %v, want %v", name, a, p, got, want)
				}
				if k := v.mergeBlocks(p, nil, sc); k != len(want) {
					t.Fatalf("%s alphabet %d: mergeBlocks(%q, count) from units = %d, want %d", name, a, p, k, len(want))
				}
			}
		}
		// Units are found: count the parts the merge of white space starts from.
		bytes, parts := 0, 0
		for it := 0; it < 2000; it++ {
			var sb strings.Builder
			for sb.Len() < 32 {
				sb.WriteString(alphabets[0][rng.IntN(len(alphabets[0]))])
			}
			p := sb.String()
			bytes += len(p)
			parts += v.partsOf(p, sc)
		}
		if 3*parts > 2*bytes {
			t.Errorf("%s: the merges of white space start from %d parts for %d bytes: units are missing", name, parts, bytes)
		}
		t.Logf("%s: white space, %d parts for %d bytes", name, parts, bytes)
	}
}

// partsOf is the number of parts mergeBlocks starts p from, with sc's units.
func (v *vocab) partsOf(p string, sc *scratch) int {
	var key [blockMax]uint32
	var next, prev [blockMax]uint8
	var pt [blockMax]uint32
	n := len(p)
	for i := 0; i < n; i++ {
		next[i], prev[i], pt[i] = uint8(i+1), uint8(i), v.byte1[p[i]]
		if i+1 < n {
			key[i] = blockKey(uint32(v.pair[uint16(p[i])<<8|uint16(p[i+1])]), i)
		}
	}
	return v.joinUnits(p, sc, &key, &next, &prev, &pt)
}

// TestUnitTables checks buildUnits' tables against the tokens read one by one, for the pairs
// of bytes of white space, of lower-case letters, and 300 more at random.
func TestUnitTables(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for _, name := range Names() {
		v := mustGet(t, name).v
		u := v.units()
		tokens := make([]string, v.n)
		for r := range tokens {
			tokens[r] = v.token(uint32(r))
		}
		var pairs []string
		for _, a := range []string{" \t\n\r\xc2\xa0\xe3\x80", "etaoinshrdlu"} {
			for i := range len(a) {
				for j := range len(a) {
					pairs = append(pairs, string([]byte{a[i], a[j]}))
				}
			}
		}
		for range 300 {
			pairs = append(pairs, string([]byte{byte(rng.IntN(256)), byte(rng.IntN(256))}))
		}
		units := 0
		for _, w := range pairs {
			suf, pre, longer := noRank, noRank, noRank
			for r, tok := range tokens {
				if len(tok) >= 2 && strings.HasSuffix(tok, w) {
					suf = min(suf, uint32(r))
				}
				if len(tok) >= 2 && strings.HasPrefix(tok, w) {
					pre = min(pre, uint32(r))
				}
				if len(tok) > 2 && (strings.HasPrefix(tok, w) || strings.HasSuffix(tok, w)) {
					longer = min(longer, uint32(r))
				}
			}
			r := v.rank(w)
			isUnit := r != noRank && r < 0xFFFF && longer > r
			c := u.ctx[uint16(w[0])<<8|uint16(w[1])]
			if got, want := c&0xFFFF, uint64(min(suf, 0xFFFF)); got != want {
				t.Errorf("%s %q: lowest rank ending with it %d, want %d", name, w, got, want)
			}
			if got, want := c>>16&0xFFFF, uint64(min(pre, 0xFFFF)); got != want {
				t.Errorf("%s %q: lowest rank starting with it %d, want %d", name, w, got, want)
			}
			if got := c&ctxUnit != 0; got != isUnit {
				t.Errorf("%s %q: unit %v, want %v", name, w, got, isUnit)
			}
			if isUnit {
				units++
			}
		}
		if units == 0 {
			t.Errorf("%s: no unit among %d pairs", name, len(pairs))
		}
	}
}
