package bpe

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// Units: parts that a merge may start from instead of single bytes.
//
// Let a and b be adjacent parts of a merge's state, ab a token of rank r. If every token that
// the merge could make of a with the part before it, or of b with the part after it, ranks
// above r, then a and b merge with each other before either merges with anything else: ab is
// a candidate from the start, and only a lower rank is taken before it. And if every token
// that ab could make with either neighbour also ranks above r, merging ab first changes
// nothing: until the merge joins a and b, what it takes ranks below r, so the two candidates
// that ab adds (above r) are not taken instead, and the candidates it removes (a with the part
// before, b with the part after, both above r) were not taken either; once a and b are joined,
// the two states are the same. So the merge of the parts with ab joined gives the same tokens.
//
// The neighbours are not known in full when the parts are made, only their bytes next to a
// and b: with x the byte before a and y the byte after b, a token made of the part before
// and a ends with x a, one made of b and the part after starts with b y, and one made of ab
// and either neighbour is longer than ab and ends or starts with it. So unitStarts and
// joinUnits ask, of the tables of ctx and ext:
//
//   - for two bytes a b: that the tokens ending with x a and starting with b y, and those
//     longer than a b that start or end with it, rank above r;
//   - for a unit ab and the byte c after it, abc a token of rank r3: that the tokens starting
//     with c and the byte after, those longer than ab that end with it (any part before ab
//     ends with ab's last two bytes) and those longer than abc that start or end with it rank
//     above r3.
//
// Asking less would be wrong: TestUnits and TestCutMerge fail without the test of the byte
// before, or of the byte after. Where the merges read the cache of token pairs first (white
// space, punctuation, CJK), they start from units: random white space then starts from 58%
// as many parts as bytes (TestUnits), and merges 40% as often. Where they read the filters
// first (random letters), units cost more than they save, and are not used.

// unitTables are the tables of the units of one vocabulary (512 KiB, and ext).
type unitTables struct {
	// ctx[a<<8|b]: bits 0-15, the lowest rank of a token of 2 bytes or more ending with a b;
	// 16-31, starting with a b (both kept as 0xFFFF from 0xFFFF on, which keeps "ranks above r"
	// exact for r below 0xFFFF, and no unit ranks higher); bit 32, a b is a unit candidate: a
	// token ranked below 0xFFFF, every longer token starting or ending with it ranked above it;
	// bit 33, a three-byte token starting with a b has its bit in ext.
	ctx [1 << 16]uint64
	ext []uint64 // bit r: the three-byte token of rank r extends the unit of its first two bytes (see above)
}

const (
	ctxUnit = 1 << 32
	ctxExt  = 1 << 33
)

// buildUnits makes v's unit tables from its tokens.
func (v *vocab) buildUnits() *unitTables {
	u := &unitTables{}
	// For each pair of bytes, the lowest rank of a token of 2 bytes or more ending with it
	// (suf) and starting with it (pre), and of one of 3 bytes or more starting or ending with
	// it (longer) and ending with it (longerSuf).
	type pairMin struct{ suf, pre, longer, longerSuf uint32 }
	mins := make([]pairMin, 1<<16)
	for i := range mins {
		mins[i] = pairMin{noRank, noRank, noRank, noRank}
	}
	off := v.offsets()
	for r := 0; r < v.n; r++ {
		o, n := off[r], int(off[r+1]-off[r])
		if n < 2 {
			continue
		}
		pre, suf := &mins[uint16(v.blob[o])<<8|uint16(v.blob[o+1])], &mins[uint16(v.blob[int(o)+n-2])<<8|uint16(v.blob[int(o)+n-1])]
		// (Ranks rise with r: the first token to set a minimum is the lowest.)
		pre.pre = min(pre.pre, uint32(r))
		suf.suf = min(suf.suf, uint32(r))
		if n >= 3 {
			pre.longer = min(pre.longer, uint32(r))
			suf.longer = min(suf.longer, uint32(r))
			suf.longerSuf = min(suf.longerSuf, uint32(r))
		}
	}
	for w := range 1 << 16 {
		m := &mins[w]
		u.ctx[w] = uint64(min(m.suf, 0xFFFF)) | uint64(min(m.pre, 0xFFFF))<<16
		if r := v.pair[w]; r >= 0 && r < 0xFFFF && m.longer > uint32(r) {
			u.ctx[w] |= ctxUnit
		}
	}
	// The three-byte tokens that can extend a unit, and for each, the lowest rank of a longer
	// token starting or ending with it: a small open-addressed table of them, keyed by their
	// bytes b0<<16 | b1<<8 | b2 (+1, so that 0 is empty).
	isUnit := func(a, b byte) bool { return u.ctx[uint16(a)<<8|uint16(b)]&ctxUnit != 0 }
	var cand []uint32 // ranks of the three-byte tokens whose first two bytes are a unit
	for r := 0; r < min(v.n, 0xFFFF); r++ {
		if o := off[r]; v.lens[r] == 3 && isUnit(v.blob[o], v.blob[o+1]) {
			cand = append(cand, uint32(r))
		}
	}
	size := 1
	for size < 2*len(cand) {
		size *= 2
	}
	keys, longer := make([]uint32, size), make([]uint32, size)
	key3 := func(o uint32) uint32 {
		return uint32(v.blob[o])<<16 | uint32(v.blob[o+1])<<8 | uint32(v.blob[o+2]) + 1
	}
	slot := func(k uint32) int { // the slot of k, or of the empty entry where it would go
		i := int(k*0x9E3779B1>>8) & (size - 1)
		for keys[i] != 0 && keys[i] != k {
			i = (i + 1) & (size - 1)
		}
		return i
	}
	for _, r := range cand {
		i := slot(key3(off[r]))
		keys[i], longer[i] = key3(off[r]), noRank
	}
	if len(cand) > 0 {
		for r := 0; r < v.n; r++ {
			if n := uint32(v.lens[r]); n >= 4 {
				for _, o := range [2]uint32{off[r], off[r] + n - 3} {
					if !isUnit(v.blob[o], v.blob[o+1]) {
						continue
					}
					if i := slot(key3(o)); keys[i] != 0 {
						longer[i] = min(longer[i], uint32(r))
					}
				}
			}
		}
	}
	u.ext = make([]uint64, (v.n+63)/64)
	for _, r := range cand {
		o := off[r]
		ab := uint16(v.blob[o])<<8 | uint16(v.blob[o+1])
		if longer[slot(key3(o))] > r && mins[ab].longerSuf > r {
			u.ext[r>>6] |= 1 << (r & 63)
			u.ctx[ab] |= ctxExt
		}
	}
	return u
}

// units returns v's unit tables, read on first use from the list embedded beside the
// vocabulary (data/*.unit, about a millisecond) or, without it (a build with the tag
// parley_novocab), built from the tokens (6 ms for o200k_base).
func (v *vocab) units() *unitTables {
	v.unitOnce.Do(func() {
		if v.unitTab = readUnits(v.unitList, v.n); v.unitTab == nil {
			v.unitTab = v.buildUnits()
		}
	})
	return v.unitTab
}

// The unit list (data/*.unit, written by TestTables -update-tables): unitMagic; the number of
// entries of ctx that are not ctxNone, then each as the difference of its index from the one
// before (from -1 for the first) and its value; the number of bits set in ext, then each as
// the difference of its rank from the one before (from 0 for the first). All numbers are
// unsigned LEB128.
const unitMagic = "PBUN1\n"

// ctxNone is ctx of a pair of bytes that no token of two bytes or more starts or ends with.
const ctxNone = 0xFFFF | 0xFFFF<<16

// writeUnits returns the unit list of u.
func writeUnits(u *unitTables) []byte {
	out := []byte(unitMagic)
	n := 0
	for _, c := range u.ctx {
		if c != ctxNone {
			n++
		}
	}
	out = binary.AppendUvarint(out, uint64(n))
	prev := -1
	for w, c := range u.ctx {
		if c != ctxNone {
			out = binary.AppendUvarint(out, uint64(w-prev))
			out = binary.AppendUvarint(out, c)
			prev = w
		}
	}
	n = 0
	for _, x := range u.ext {
		n += bits.OnesCount64(x)
	}
	out = binary.AppendUvarint(out, uint64(n))
	prevR := 0
	for i, x := range u.ext {
		for ; x != 0; x &= x - 1 {
			r := i*64 + bits.TrailingZeros64(x)
			out = binary.AppendUvarint(out, uint64(r-prevR))
			prevR = r
		}
	}
	return out
}

// readUnits returns the unit tables of the list s for a vocabulary of n tokens, or nil if s
// is empty or corrupt.
func readUnits(s string, n int) *unitTables {
	if len(s) < len(unitMagic) || s[:len(unitMagic)] != unitMagic {
		return nil
	}
	b := []byte(s[len(unitMagic):])
	next := func() (uint64, bool) { // (only the shortest form of each number: one list per tables)
		x, k := binary.Uvarint(b)
		if k <= 0 || k != len(binary.AppendUvarint(nil, x)) {
			return 0, false
		}
		b = b[k:]
		return x, true
	}
	u := &unitTables{ext: make([]uint64, (n+63)/64)}
	for i := range u.ctx {
		u.ctx[i] = ctxNone
	}
	count, ok := next()
	if !ok || count > 1<<16 {
		return nil
	}
	w := -1
	for range count {
		d, ok1 := next()
		c, ok2 := next()
		if !ok1 || !ok2 || d == 0 || d > 1<<16 || c >= 1<<34 || c == ctxNone {
			return nil
		}
		if w += int(d); w >= 1<<16 {
			return nil
		}
		u.ctx[w] = c
	}
	if count, ok = next(); !ok || count > uint64(n) {
		return nil
	}
	r := 0
	for k := range count {
		d, ok := next()
		if !ok || d > uint64(n) || d == 0 && k > 0 {
			return nil
		}
		if r += int(d); r >= n {
			return nil
		}
		u.ext[r>>6] |= 1 << (r & 63)
	}
	if len(b) != 0 {
		return nil
	}
	return u
}

// joinUnits joins the units of p (2..blockMax bytes; see above) in mergeBlocks' arrays, made
// for single bytes, and gives the keys of the pairs they make with their neighbours (through
// sc's cache of token pairs). It returns the number of parts.
func (v *vocab) joinUnits(p string, sc *scratch, key *[blockMax]uint32, next, prev *[blockMax]uint8, pt *[blockMax]uint32) int {
	u, n, pair := sc.units, len(p), v.pair[:1<<16]
	units, cand := unitStarts(&u.ctx, pair, p)
	if units == 0 {
		return n
	}
	b := unsafe.Pointer(unsafe.StringData(p))
	at := func(i int) uint16 { return uint16(*(*byte)(unsafe.Add(b, i))) } // p[i], 0 <= i < n
	var ext uint64
	var r3 [blockMax]uint32
	for m := units & cand; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		if i+2 >= n {
			continue
		}
		r := v.rank3(byte(at(i)), byte(at(i+1)), byte(at(i+2)))
		if r == noRank || u.ext[r>>6]>>(r&63)&1 == 0 || i+3 < n && u.ctx[at(i+2)<<8|at(i+3)]>>16&0xFFFF <= uint64(r) {
			continue
		}
		ext |= 1 << (i & 63)
		r3[i&63] = r
	}
	units &^= ext << 2
	ext &= units
	for m := units; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		e := int(ext >> (i & 63) & 1)
		k := i + 2 + e
		r := uint32(pair[at(i)<<8|at(i+1)])
		if e != 0 {
			r = r3[i&63]
		}
		key[(i+1)&63], key[(i+1+e)&63] = 0, 0
		next[i&63], pt[i&63] = uint8(k), r
		prev[k&63] = uint8(i + 1) // (no part starts at k == n: harmless, but for n == 64, prev[0])
	}
	prev[0] = 0
	// The keys to make: of each unit with the part after it, and of each single byte before a
	// unit with it (the pairs of two single bytes keep theirs). All have 3 bytes or more.
	covered := units | units<<1 | ext<<2
	for m := units | units>>1&^covered; m != 0; m &= m - 1 {
		q := bits.TrailingZeros64(m)
		j := int(next[q&63])
		if j >= n {
			key[q&63] = 0
			continue
		}
		e := int(next[j&63])
		ck := uint64(1)<<42 | uint64(pt[q&63])<<20 | uint64(pt[j&63])
		ci := (ck * hm1) >> (64 - cacheBits)
		var r uint32
		if ce := sc.cache[ci]; ce>>21 == ck {
			if r = uint32(ce) & low21; r == low21 {
				r = noRank
			}
		} else {
			r = v.pairRankMiss(sc, ck, ci, p[q:e])
		}
		key[q&63] = blockKey(r, q)
	}
	return n - bits.OnesCount64(units) - bits.OnesCount64(ext)
}

// unitStarts returns where units of two bytes can start in p (bit i of units), and which of
// those can extend to three bytes (bit i of cand), with no branch on the bytes (white space
// mixes units and single bytes at random): the pair at i is a unit when ctx says it can be one
// and its rank is below the lowest of what ends with the pair before (0xFFFF at the start) and
// of what starts with the pair after (0xFFFF at the end).
func unitStarts(ctx *[1 << 16]uint64, pair []int32, p string) (units, cand uint64) {
	n := len(p)
	left, c := uint64(0xFFFF), ctx[uint16(p[0])<<8|uint16(p[1])]
	for i := 0; i < n-1; i++ {
		r := uint64(uint32(pair[uint16(p[i])<<8|uint16(p[i+1])])) // (above 0xFFFF for no token)
		cn, right := c, uint64(0xFFFF)
		if i+2 < n {
			cn = ctx[uint16(p[i+1])<<8|uint16(p[i+2])]
			right = cn >> 16 & 0xFFFF
		}
		units |= (c >> 32 & b2u(left > r) & b2u(right > r)) << (i & 63)
		cand |= (c >> 33 & 1) << (i & 63)
		left, c = c&0xFFFF, cn
	}
	return units, cand
}

// b2u is 1 for true and 0 for false, with no branch (SETcc).
func b2u(c bool) uint64 {
	var x uint64
	if c {
		x = 1
	}
	return x
}
