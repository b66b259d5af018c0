package bpe

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// Long pieces are first cut where no token can reach across: the merge only ever joins
// parts into tokens, so if no token holds bytes on both sides of a position x, no part ever
// spans x, and each side merges as it would alone. (The whole piece always merges the
// lowest pair of either side, in some interleaving of the two sides' own orders; the pair
// across x is never a candidate.) So the piece's tokens are those of each cut-out segment
// merged on its own, segment after segment.
//
// A token that spans x holds p[x-1:x+1]; if it has two bytes it is that pair, and if it has
// three or more it holds one of the three-byte strings p[x-2:x+1] or p[x-1:x+2]. So x is a
// cut when p[x-1:x+1] is no token and neither three-byte string occurs inside any token. Two
// bitmaps answer that: the two-byte tokens (8 KiB) and every three bytes found inside a token
// (2 MiB, made by the first long piece that needs them from a list embedded beside the
// vocabulary, in a fraction of a millisecond). Random letters are cut
// every 13 (cl100k_base) to 26 (o200k_base) bytes on average, random white space every 6 to
// 8, random punctuation every 2 or 3; a run of one byte (a megabyte of spaces) has no cut and
// goes to the chunked merge. Segments of up to pcKeyLen bytes go through the cache of merged
// pieces, longer ones through mergeBlocks and mergeBlocksLong (blocks.go).

// cutPiece: pieces at least this long are cut before they are merged. Shorter ones are merged
// whole (mergeBlocks and the cache of merged pieces serve them better), and ordinary text
// never builds the bitmaps.
const cutPiece = 256

// cutTable holds the two bitmaps of one vocabulary, and the filters of its merges' candidates.
type cutTable struct {
	pair [1 << 16 / 64]uint64  // bit b0<<8|b1: b0 b1 is a token
	tri  *[1 << 24 / 64]uint64 // bit b0<<16|b1<<8|b2: b0 b1 b2 occurs inside a token

	// The merges of a cut piece ask whether each candidate (two adjacent parts joined, three
	// bytes or more) is a token, and most are not. These filters answer most of those asks
	// with two reads and no branch on the candidate's length: a token has its bit set in
	// head and in tail, two hashes of its length and of some of its bytes (candHash).
	head, tail [1 << candBits / 64]uint64
}

// candBits is the size of each filter, 2^candBits bits (64 KiB). o200k_base's 195,089 tokens
// of three bytes or more set 22% of the bits of head and 18% of tail (cl100k_base's 96,170:
// 13% and 11%).
const candBits = 19

// filteredRankAt is the rank of the n bytes at p (a candidate of 3 bytes or more), or noRank:
// the filters rule most candidates that are no token out with two reads (4% of random strings of
// letters and white space pass on o200k_base, 1.5% on cl100k_base: TestCandidateFilter), and
// only those they let through are looked up. (The merges pass the bytes as a pointer and a length, not a
// string, whose slicing checks bounds on the path from one merge to the next.)
func (v *vocab) filteredRankAt(c *cutTable, p unsafe.Pointer, n int) uint32 {
	h, e := candHash(p, n)
	if c.head[h>>6]>>(h&63)&(c.tail[e>>6]>>(e&63))&1 == 0 {
		return noRank
	}
	if n <= 8 {
		return v.rankShort(unsafe.String((*byte)(p), n))
	}
	return v.rank(unsafe.String((*byte)(p), n))
}

// candHash gives the bits of head and tail for the n bytes at b (3 or more): hashes of n and of
// the first three bytes and the last, and of the first byte and the last three (for three or
// four bytes, two hashes of the whole string).
func candHash(b unsafe.Pointer, n int) (head, tail uint32) {
	first, last := uint64(*(*uint16)(b)), uint64(*(*byte)(unsafe.Add(b, n-1)))
	h := first | uint64(*(*byte)(unsafe.Add(b, 2)))<<16 | last<<24 | uint64(n)<<32
	t := first&0xff | uint64(*(*uint16)(unsafe.Add(b, n-3)))<<8 | last<<24 | uint64(n)<<32
	return uint32(h * 0x9E3779B97F4A7C15 >> (64 - candBits)), uint32(t * 0xC2B2AE3D27D4EB4F >> (64 - candBits))
}

func (c *cutTable) hasPair(a, b byte) bool {
	k := uint32(a)<<8 | uint32(b)
	return c.pair[k>>6]&(1<<(k&63)) != 0
}

func (c *cutTable) hasTri(a, b, d byte) bool {
	k := uint32(a)<<16 | uint32(b)<<8 | uint32(d)
	return c.tri[k>>6]&(1<<(k&63)) != 0
}

// cuts returns v's bitmaps and filters, made on first use: the pairs from v.pair, the
// three-byte strings from the list embedded beside the vocabulary (data/*.tri, a few hundred
// microseconds) or, without it (a build with the tag parley_novocab), from every token (about
// 2 ms), and the filters from every token (0.4 to 0.6 ms more).
func (v *vocab) cuts() *cutTable {
	v.cutOnce.Do(func() {
		c := &cutTable{}
		for k, r := range v.pair {
			if r >= 0 {
				c.pair[k>>6] |= 1 << (k & 63)
			}
		}
		if c.tri = readTri(v.triList); c.tri == nil {
			c.tri = v.buildTri()
		}
		off := v.offsets()
		for r := 0; r < v.n; r++ {
			t := v.blob[off[r]:off[r+1]]
			if p := unsafe.Pointer(unsafe.StringData(t)); len(t) >= 3 {
				h, e := candHash(p, len(t))
				c.head[h>>6] |= 1 << (h & 63)
				c.tail[e>>6] |= 1 << (e & 63)
			}
		}
		v.cut = c
	})
	return v.cut
}

// buildTri returns the bitmap of every three bytes found inside a token of v.
func (v *vocab) buildTri() *[1 << 24 / 64]uint64 {
	tri := new([1 << 24 / 64]uint64)
	off := v.offsets()
	for r := 0; r < v.n; r++ {
		t := v.blob[off[r]:off[r+1]]
		if len(t) < 3 {
			continue
		}
		k := uint32(t[0])<<8 | uint32(t[1])
		for i := 2; i < len(t); i++ {
			k = (k<<8 | uint32(t[i])) & (1<<24 - 1)
			tri[k>>6] |= 1 << (k & 63)
		}
	}
	return tri
}

// The list of three-byte strings (data/*.tri, written by TestTables -update-tables): triMagic,
// then the strings as 24-bit numbers b0<<16|b1<<8|b2 in increasing order, each as its
// difference from the one before (from 0 for the first) in unsigned LEB128. There are few of
// them (46,182 in o200k_base, 27,066 in cl100k_base: the tokens' trigrams repeat), so reading
// the list costs a fraction of going through every token.
const triMagic = "PBPR1\n"

// readTri returns the bitmap of the list tri, or nil if tri is empty or corrupt.
func readTri(list string) *[1 << 24 / 64]uint64 {
	if len(list) < len(triMagic) || list[:len(triMagic)] != triMagic {
		return nil
	}
	tri := new([1 << 24 / 64]uint64)
	k, d, shift := uint32(0), uint32(0), 0
	for i := len(triMagic); i < len(list); i++ {
		b := list[i]
		d |= uint32(b&0x7f) << shift
		if b >= 0x80 {
			if shift += 7; shift > 21 {
				return nil
			}
			continue
		}
		if k += d; k >= 1<<24 {
			return nil
		}
		tri[k>>6] |= 1 << (k & 63)
		d, shift = 0, 0
	}
	if shift != 0 {
		return nil
	}
	return tri
}

// writeTri returns the list of the bitmap tri (see triMagic).
func writeTri(tri *[1 << 24 / 64]uint64) []byte {
	out := []byte(triMagic)
	prev := 0
	for w, x := range tri {
		for ; x != 0; x &= x - 1 {
			k := w*64 + bits.TrailingZeros64(x)
			out = binary.AppendUvarint(out, uint64(k-prev))
			prev = k
		}
	}
	return out
}

// mergeCut merges a piece of at least cutPiece bytes segment by segment (see above).
func (v *vocab) mergeCut(p string, out []int, m *merger) ([]int, int) {
	// A cut needs a pair of bytes that is no token: a run of one byte (spaces, newlines, one
	// letter) whose pair is a token has none, and goes whole to the chunked merge without the
	// bitmaps.
	if v.pair[int(p[0])<<8|int(p[0])] >= 0 && p[1:] == p[:len(p)-1] {
		return v.mergeSegment(p, out, m)
	}
	c := v.cuts()
	sc := m.scratch(v)
	sc.cut, sc.units = c, v.units()
	n, count, start := len(p), 0, 0
	sc.filtersFirst, sc.prMiss, sc.chosen, sc.chosenCount, sc.filterRun = filtersFirstStart, 0, 0, 0, filterRunMin
	chooseAt := probeBytes
	cutAt := func(x int) {
		var k int
		out, k = v.mergeSegment(p[start:x], out, m)
		count += k
		start = x
		if x >= chooseAt {
			chooseAt = sc.choose(x, count)
		}
	}
	// x is a cut when p[x-1:x+1] is no token and neither p[x-2:x+1] nor p[x-1:x+2] occurs
	// inside a token. The positions are read 64 at a time, into masks and without a branch
	// that depends on the bytes (where pairs that are tokens and pairs that are not alternate
	// at random, as in white space, testing each position cost three times as much): first
	// the pairs, then the three-byte strings only at the positions whose pair is no token
	// (few in a run of letters), then each cut in order. Position 1 has no p[x-2:x+1] and
	// position n-1 no p[x-1:x+2].
	tri, base := c.tri, unsafe.Pointer(unsafe.StringData(p))
	at := func(i int) uint32 { return uint32(*(*byte)(unsafe.Add(base, i))) } // p[i], 0 <= i < n
	for x := 1; x < n; x += 64 {
		w, l := at(x-1), min(64, n-x)
		var noPair uint64 // bit b: p[x+b-1:x+b+1] is no token
		for b := range l {
			w = (w<<8 | at(x+b)) & (1<<16 - 1)
			noPair |= (^c.pair[w>>6] >> (w & 63) & 1) << (b & 63)
		}
		var cuts uint64
		for m := noPair; m != 0; m &= m - 1 {
			b := bits.TrailingZeros64(m)
			y := x + b
			var in uint64
			if y >= 2 && y+1 < n { // p[y-2:y+2], big-endian: p[y-2:y+1] above p[y+1]
				q := binary.BigEndian.Uint32(unsafe.Slice((*byte)(unsafe.Add(base, y-2)), 4))
				k, k2 := q>>8, q&(1<<24-1)
				in = tri[k>>6]>>(k&63) | tri[k2>>6]>>(k2&63)
			} else if y >= 2 && c.hasTri(p[y-2], p[y-1], p[y]) || y+1 < n && c.hasTri(p[y-1], p[y], p[y+1]) {
				in = 1 // position 1 or n-1
			}
			cuts |= (^in & 1) << (b & 63)
		}
		for ; cuts != 0; cuts &= cuts - 1 {
			cutAt(x + bits.TrailingZeros64(cuts))
		}
	}
	out, k := v.mergeSegment(p[start:], out, m)
	sc.cut, sc.units = nil, nil
	return out, count + k
}

// mergeThree merges a segment of three bytes: the lower of its two pairs merges (the left
// one on a tie), if either is a token, and then the whole segment, if it is a token (which
// the filter of sc's cut table, when there is one, rules out without a lookup).
func (v *vocab) mergeThree(s string, out []int, sc *scratch) ([]int, int) {
	r01, r12 := v.pair[uint16(s[0])<<8|uint16(s[1])], v.pair[uint16(s[1])<<8|uint16(s[2])]
	if r01 < 0 && r12 < 0 {
		if out != nil {
			out = append(out, int(v.byte1[s[0]]), int(v.byte1[s[1]]), int(v.byte1[s[2]]))
		}
		return out, 3
	}
	var r uint32
	if sc == nil || sc.cut == nil {
		r = v.rankShort(s)
	} else {
		r = v.filteredRankAt(sc.cut, unsafe.Pointer(unsafe.StringData(s)), 3)
	}
	if r != noRank {
		if out != nil {
			out = append(out, int(r))
		}
		return out, 1
	}
	if out != nil {
		if r01 >= 0 && (r12 < 0 || r01 <= r12) {
			out = append(out, int(r01), int(v.byte1[s[2]]))
		} else {
			out = append(out, int(v.byte1[s[0]]), int(r12))
		}
	}
	return out, 2
}

// choose chooses the order of the merges' asks for what follows x in a cut piece (filtersFirst),
// when the segments merged so far end at x and hold count tokens, and returns where to choose
// next. Only the cache of token pairs can tell how often it misses, so the merges ask it first
// for probeBytes; if more than a quarter of those asks (about two per merge: bytes less
// tokens) missed it, the filters are read first for the next sc.filterRun bytes, and then the
// cache is probed again. (Random letters miss it about 85% of the time; white space, CJK and
// emoji 0 to 13%.) Each probe that finds the filters better doubles the run after it, up to
// filterRunMax, so that on a long piece of one kind the probes cost almost nothing.
func (sc *scratch) choose(x, count int) int {
	if !sc.filtersFirst {
		if asks := 2 * (x - sc.chosen - (count - sc.chosenCount)); asks > 0 && 4*sc.prMiss > asks {
			sc.filtersFirst = true
			run := sc.filterRun
			sc.filterRun = min(2*run, filterRunMax)
			return x + run
		}
		sc.filterRun = filterRunMin
	}
	sc.filtersFirst, sc.prMiss, sc.chosen, sc.chosenCount = false, 0, x, count
	return x + probeBytes
}

const (
	probeBytes   = 2048
	filterRunMin = 32 << 10
	filterRunMax = 1 << 20
)

// filtersFirstStart is filtersFirst at the start of a cut piece: false, the tests set it to check
// the merges that read the filters first on short pieces too.
var filtersFirstStart = false

// mergeSegment merges a segment of a piece: like encodePiece, except that a segment that is a
// token is merged all the same (a piece that is a token is that token, a segment need not be).
func (v *vocab) mergeSegment(s string, out []int, m *merger) ([]int, int) {
	switch n := len(s); {
	case n == 1:
		if out != nil {
			out = append(out, int(v.byte1[s[0]]))
		}
		return out, 1
	case n == 2:
		if r := v.pair[int(s[0])<<8|int(s[1])]; r >= 0 {
			if out != nil {
				out = append(out, int(r))
			}
			return out, 1
		}
		if out != nil {
			out = append(out, int(v.byte1[s[0]]), int(v.byte1[s[1]]))
		}
		return out, 2
	case n == 3:
		return v.mergeThree(s, out, m.sc)
	case n <= pcKeyLen && (m.sc == nil || !m.sc.filtersFirst):
		// (Where pairs rarely repeat, segments do not either: random letters miss the cache.)
		_, h := keyHash(s)
		return v.mergeCached(s, h, out, m)
	case n <= blockMax && (m.sc == nil || !m.sc.filtersFirst || n <= 16):
		// (Reading the filters first, segments of more than 16 bytes merge faster in
		// mergeBlocksLong, with their block maxima gathered in one: 9% a merge on random
		// letters. Reading the cache first, mergeBlocks, which reads it inline, is 20% faster.)
		if out == nil {
			return out, v.mergeBlocks(s, nil, m.scratch(v))
		}
		var toks [blockMax]uint32
		k := v.mergeBlocks(s, &toks, m.scratch(v))
		for _, t := range toks[:k] {
			out = append(out, int(t))
		}
		return out, k
	case n <= blocksLongMax:
		sc := m.scratch(v)
		if out == nil {
			return out, v.countBlocksLong(s, sc)
		}
		sc.toks = v.mergeBlocksLong(s, sc, sc.toks[:0])
		for _, t := range sc.toks {
			out = append(out, int(t))
		}
		return out, len(sc.toks)
	case n < chunkedPiece:
		return v.mergeLong(s, m.scratch(v), out)
	default:
		return v.mergeChunked(s, m.scratch(v), out)
	}
}
