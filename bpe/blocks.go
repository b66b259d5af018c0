package bpe

import "unsafe"

// mergeBlocks is the merge of short pieces and segments (2..blockMax bytes): tiktoken's
// merge over a list of parts in stack arrays, with the keys of the pairs kept in blocks of
// eight and the largest key of each block beside them, so that finding the next pair reads
// at most eight block maxima and a merge recomputes at most three blocks, with no branch to
// mispredict and no bounds check.
//
// A key is ^(rank<<6 | start): the largest key is the lowest rank, leftmost on ties. A pair
// that is no token (rank noRank, all ones) gets a key below 64, and so does a start where no
// part starts (0, so that the arrays start zeroed): smaller than every token's key, so the
// merge ends when the largest key is below 64. Making a key takes no branch, which matters
// where tokens and non-tokens alternate at random (white space: a fifth faster than testing
// for noRank).

// blockMax is the longest piece mergeBlocks takes.
const blockMax = 64

// blockKey is mergeBlocks' key of the pair of rank r starting at i: below 64 for no token
// (r == noRank), with no branch.
func blockKey(r uint32, i int) uint32 { return ^(r<<6 | uint32(i)) }

// mergeBlocks merges p (2..blockMax bytes) into tok and returns the number of tokens. The
// ranks of the pairs that merges make come from sc's cache of token pairs (pairRank) when sc
// is not nil. With tok nil, it only counts the tokens.
func (v *vocab) mergeBlocks(p string, tok *[blockMax]uint32, sc *scratch) int {
	var key [blockMax]uint32 // key[i]: the pair of the part starting at i with the next part
	var bm [blockMax / 8]uint32
	var next [blockMax]uint8 // next[i]: start of the part after the one starting at i
	var prev [blockMax]uint8 // prev[i]: start of the part before the one at i, +1 (0: none)
	var pt [blockMax]uint32  // pt[i]: token of the part at i
	n := len(p)
	if n > blockMax || n < 2 {
		panic("bpe: mergeBlocks: bad length")
	}
	if sc != nil && sc.cacheOf != v {
		clear(sc.cache[:])
		sc.cacheOf = v
	}
	var filters *cutTable // the cut table, when its filters are read instead of the cache of pairRank (candidates have 3 bytes or more)
	if sc != nil && sc.filtersFirst {
		filters = sc.cut
	}
	pair, base := v.pair[:1<<16], unsafe.Pointer(unsafe.StringData(p))
	for i := 0; i < n-1; i++ {
		key[i&63] = blockKey(uint32(pair[uint16(p[i])<<8|uint16(p[i+1])]), i)
		next[i&63] = uint8(i + 1)
		prev[i&63] = uint8(i)
		pt[i&63] = v.byte1[p[i]]
	}
	next[(n-1)&63], prev[(n-1)&63], pt[(n-1)&63] = uint8(n), uint8(n-1), v.byte1[p[n-1]]
	parts := n
	if sc != nil && sc.units != nil && filters == nil {
		// (Reading the filters first, as for random letters, starting from units is slower.)
		parts = v.joinUnits(p, sc, &key, &next, &prev, &pt)
	}
	nb := (n + 6) >> 3 // blocks holding pairs
	for b := 0; b < nb; b++ {
		bm[b&7] = blockMax8((*[8]uint32)(key[(b&7)*8:]))
	}
	merges := 0
	for ; ; merges++ {
		var top uint32
		switch nb {
		case 1:
			top = bm[0]
		case 2:
			top = max(bm[0], bm[1])
		case 3, 4:
			top = max(max(bm[0], bm[1]), max(bm[2], bm[3]))
		default:
			top = blockMax8(&bm)
		}
		if top < 64 {
			break
		}
		top = ^top
		i, r := int(top&63), top>>6
		j := int(next[i])
		k := int(next[j&63]) // the merged part is p[i:k]
		key[j&63] = 0
		next[i], pt[i] = uint8(k), r
		if k < n {
			prev[k&63] = uint8(i + 1)
			r2 := noRank
			if e := int(next[k&63]); filters != nil {
				r2 = v.filteredRankAt(filters, unsafe.Add(base, i), e-i)
			} else if t := p[i:e]; sc == nil {
				if len(t) <= 8 {
					r2 = v.rankShort(t)
				} else {
					r2 = v.rank(t)
				}
			} else {
				ck := uint64(1)<<42 | uint64(r)<<20 | uint64(pt[k&63])
				ci := (ck * hm1) >> (64 - cacheBits)
				if e := sc.cache[ci]; e>>21 == ck {
					if r2 = uint32(e) & low21; r2 == low21 {
						r2 = noRank
					}
				} else {
					r2 = v.pairRankMiss(sc, ck, ci, t)
				}
			}
			key[i] = blockKey(r2, i)
		} else {
			key[i] = 0
		}
		q := int(prev[i]) - 1
		if q >= 0 {
			r3 := noRank
			if filters != nil {
				r3 = v.filteredRankAt(filters, unsafe.Add(base, q), k-q)
			} else if t := p[q:k]; sc == nil {
				if len(t) <= 8 {
					r3 = v.rankShort(t)
				} else {
					r3 = v.rank(t)
				}
			} else {
				ck := uint64(1)<<42 | uint64(pt[q&63])<<20 | uint64(r)
				ci := (ck * hm1) >> (64 - cacheBits)
				if e := sc.cache[ci]; e>>21 == ck {
					if r3 = uint32(e) & low21; r3 == low21 {
						r3 = noRank
					}
				} else {
					r3 = v.pairRankMiss(sc, ck, ci, t)
				}
			}
			key[q&63] = blockKey(r3, q)
		}
		bi := i >> 3
		bm[bi&7] = blockMax8((*[8]uint32)(key[(bi&7)*8:]))
		if bj := j >> 3; bj != bi {
			bm[bj&7] = blockMax8((*[8]uint32)(key[(bj&7)*8:]))
		}
		if bq := q >> 3; q >= 0 && bq != bi {
			bm[bq&7] = blockMax8((*[8]uint32)(key[(bq&7)*8:]))
		}
	}
	if tok == nil {
		return parts - merges
	}
	c := 0
	for i := 0; i < n; i = int(next[i&63]) {
		tok[c&63] = pt[i&63]
		c++
	}
	return c
}

func blockMax8(k *[8]uint32) uint32 {
	return max(max(max(k[0], k[1]), max(k[2], k[3])), max(max(k[4], k[5]), max(k[6], k[7])))
}

// blocksLongMax is the longest segment mergeBlocksLong takes.
const blocksLongMax = 1024

// longBlocks holds mergeBlocksLong's arrays (in a scratch: 14 KiB).
type longBlocks struct {
	key  [blocksLongMax]uint32 // ^(rank<<10 | start), 0 for none
	bm   [blocksLongMax / 8]uint32
	sm   [blocksLongMax / 64]uint32
	next [blocksLongMax]uint16
	prev [blocksLongMax]uint16 // +1, 0 for none
	pt   [blocksLongMax]uint32
}

// mergeBlocksLong is mergeBlocks for segments of up to blocksLongMax bytes, with a second
// level: the maxima of eight blocks. Finding the next pair reads the sixteen maxima of the
// second level, and a merge recomputes at most three blocks and three of their groups. Keys
// are ^(rank<<10 | start), below blocksLongMax for no token. It appends the tokens to toks.
func (v *vocab) mergeBlocksLong(p string, sc *scratch, toks []uint32) []uint32 {
	v.blocksLong(p, sc)
	next, pt := &sc.lb.next, &sc.lb.pt
	for i := 0; i < len(p); i = int(next[i&(blocksLongMax-1)]) {
		toks = append(toks, pt[i&(blocksLongMax-1)])
	}
	return toks
}

// countBlocksLong is mergeBlocksLong for Count: the number of tokens only.
func (v *vocab) countBlocksLong(p string, sc *scratch) int { return len(p) - v.blocksLong(p, sc) }

// blocksLong merges p into sc.lb (its parts in next and pt) and returns the number of merges.
func (v *vocab) blocksLong(p string, sc *scratch) int {
	n := len(p)
	if n > blocksLongMax || n < 2 {
		panic("bpe: mergeBlocksLong: bad length")
	}
	if sc.lb == nil {
		sc.lb = new(longBlocks)
	}
	if sc.cacheOf != v {
		clear(sc.cache[:])
		sc.cacheOf = v
	}
	lb := sc.lb
	key, bm, sm, next, prev, pt := &lb.key, &lb.bm, &lb.sm, &lb.next, &lb.prev, &lb.pt
	const mask = blocksLongMax - 1
	pair := v.pair[:1<<16]
	for i := 0; i < n-1; i++ {
		r := uint32(pair[uint16(p[i])<<8|uint16(p[i+1])])
		key[i&mask] = ^(r<<10 | uint32(i))
		next[i&mask] = uint16(i + 1)
		prev[i&mask] = uint16(i)
		pt[i&mask] = v.byte1[p[i]]
	}
	next[(n-1)&mask], prev[(n-1)&mask], pt[(n-1)&mask] = uint16(n), uint16(n-1), v.byte1[p[n-1]]
	groups := (n + 62) >> 6 // groups of 64 keys holding pairs
	// The blocks that hold a part's start get their maxima; the other blocks of the groups,
	// which no merge touches, are zero (most segments have a block or three).
	last := min((n-1)>>3+1, groups*8)
	clear(key[n-1 : max(n-1, last*8)])
	for b := 0; b < last; b++ {
		bm[b&127] = blockMax8((*[8]uint32)(key[(b&127)*8:]))
	}
	clear(bm[last : groups*8])
	*sm = [blocksLongMax / 64]uint32{}
	for g := 0; g < groups; g++ {
		sm[g&15] = blockMax8((*[8]uint32)(bm[(g&15)*8:]))
	}
	var filters *cutTable // the cut table, when its filters are read instead of the cache of pairRank (candidates have 3 bytes or more)
	if sc.filtersFirst {
		filters = sc.cut
	}
	base := unsafe.Pointer(unsafe.StringData(p))
	merges := 0
	for ; ; merges++ {
		var top uint32
		switch groups {
		case 1:
			top = sm[0]
		case 2:
			top = max(sm[0], sm[1])
		default:
			top = max(blockMax8((*[8]uint32)(sm[:8])), blockMax8((*[8]uint32)(sm[8:])))
		}
		if top < blocksLongMax {
			break
		}
		top = ^top
		i, r := int(top&mask), top>>10
		j := int(next[i])
		k := int(next[j&mask]) // the merged part is p[i:k]
		key[j&mask] = 0
		next[i], pt[i] = uint16(k), r
		key[i] = 0
		if k < n {
			prev[k&mask] = uint16(i + 1)
			r2 := noRank
			if e := int(next[k&mask]); filters == nil {
				r2 = v.pairRank(sc, r, pt[k&mask], p[i:e])
			} else {
				r2 = v.filteredRankAt(filters, unsafe.Add(base, i), e-i)
			}
			key[i] = ^(r2<<10 | uint32(i))
		}
		q := int(prev[i]) - 1
		if q >= 0 {
			key[q&mask] = 0
			r3 := noRank
			if filters == nil {
				r3 = v.pairRank(sc, pt[q&mask], r, p[q:k])
			} else {
				r3 = v.filteredRankAt(filters, unsafe.Add(base, q), k-q)
			}
			key[q&mask] = ^(r3<<10 | uint32(q))
		}
		bi, bj, bq := i>>3, j>>3, q>>3
		bm[bi&127] = blockMax8((*[8]uint32)(key[(bi&127)*8:]))
		if bj != bi {
			bm[bj&127] = blockMax8((*[8]uint32)(key[(bj&127)*8:]))
		}
		if q >= 0 && bq != bi {
			bm[bq&127] = blockMax8((*[8]uint32)(key[(bq&127)*8:]))
		}
		gi, gj, gq := bi>>3, bj>>3, bq>>3
		sm[gi&15] = blockMax8((*[8]uint32)(bm[(gi&15)*8:]))
		if gj != gi {
			sm[gj&15] = blockMax8((*[8]uint32)(bm[(gj&15)*8:]))
		}
		if q >= 0 && gq != gi {
			sm[gq&15] = blockMax8((*[8]uint32)(bm[(gq&15)*8:]))
		}
	}
	return merges
}
