package bpe

import (
	"slices"
	"sync"
	"unsafe"
)

// The merge step: tiktoken's byte-pair merge. Starting from single bytes, repeatedly merge
// the adjacent pair whose concatenation has the lowest rank (the leftmost such pair on a
// tie) until no adjacent pair is a token.
//
// Short pieces use tiktoken's own algorithm over a list of parts in stack arrays, the lowest
// pair found through the maxima of blocks of eight keys (blocks.go). Longer pieces use a priority queue of
// (rank, position) keys with lazy deletion over a linked list of parts: O(n log n). Pieces of
// cutPiece bytes or more are first cut where no token reaches across (cut.go). Very long
// segments are cut into chunks merged separately, each junction proved not to matter
// (chunked.go). All merge the same pairs in the same order.

// smallPiece is the longest piece merged by mergeBlocks (at most blockMax); longer pieces use
// the heap.
const smallPiece = 48

// mergeSmall merges a piece of 2..smallPiece bytes, appends its tokens to out when out is
// not nil, and returns the number of tokens.
func (v *vocab) mergeSmall(p string, out []int) ([]int, int) {
	var tok [blockMax]uint32
	n := v.mergeBlocks(p, &tok, nil)
	if out != nil {
		for _, t := range tok[:n] {
			out = append(out, int(t))
		}
	}
	return out, n
}

// scratch holds the buffers of the long merges; pooled so that steady-state encoding
// allocates nothing.
type scratch struct {
	nodes  []node
	init   []uint64 // the initial pairs, rank<<32 | start, sorted
	tmp    []uint64 // radix sort buffer
	heap   []uint64 // pairs made by merges, rank<<32 | start, possibly stale
	toks   []uint32 // tokens of the runs (of the chunks, for mergeChunked)
	seq    []mergeRec
	chunks []chunk

	// cache remembers the rank of recent pairs of tokens (see pairRank), for cacheOf.
	cache   [cacheSize]uint64
	cacheOf *vocab

	prMiss              int  // asks of pairRank that the cache did not answer (see choose)
	chosen, chosenCount int  // where choose last chose, and the tokens before
	filterRun           int  // the bytes choose reads the filters first for after its next probe that finds them better
	filtersFirst        bool // the merges read the filters of cut.go (filteredRankAt) instead of asking pairRank

	lb *longBlocks // mergeBlocksLong's arrays

	cut   *cutTable   // the bitmaps and filters of cut.go while a cut piece is merged, else nil
	units *unitTables // the tables of units.go while a cut piece is merged, else nil

	pcs [2]*pieceCache // the caches of merged pieces of the last two vocabularies used
}

// pieceCache remembers the tokens of recently merged short pieces, for one vocabulary: a
// direct-mapped table indexed by the piece's hash (128 KiB). A piece's tokens depend only on
// its bytes, so an entry whose bytes equal the piece's is its answer.
type pieceCache struct {
	of *vocab
	e  [1 << pcBits]pieceEntry
}

// pieceEntry is one cached piece of at most pcKeyLen bytes and pcToks tokens, in 64 bytes.
type pieceEntry struct {
	key  [pcKeyLen]byte
	klen uint8 // 0: empty
	n    uint8
	toks [pcToks]uint32
}

const (
	pcBits   = 11
	pcKeyLen = 24
	pcToks   = 9
)

// pieceCache returns sc's cache of merged pieces for v, emptying the older of its two if
// neither is v's.
func (sc *scratch) pieceCache(v *vocab) *pieceCache {
	if c := sc.pcs[0]; c != nil && c.of == v {
		return c
	}
	c := sc.pcs[1]
	if c == nil || c.of != v {
		if c == nil {
			c = new(pieceCache)
		} else {
			clear(c.e[:])
		}
		c.of = v
	}
	sc.pcs[0], sc.pcs[1] = c, sc.pcs[0]
	return c
}

// cacheSize is the number of entries of a scratch's cache of token pairs (32 KiB).
const cacheSize = 1 << cacheBits

const cacheBits = 12

// pairRank returns the rank of the token made of tokens a and b, whose bytes are t. Long
// runs ask for the same few pairs again and again (a run of mixed white space has a handful
// of them), so a small direct-mapped cache keyed by the two tokens answers most asks without
// hashing the bytes. An entry is 1<<63 | a<<41 | b<<21 | rank (low21 for no token).
//
// Within a cut piece (cut.go), most candidates are no token, and the filters of the cut
// table (filteredRankAt) say so without hashing them. Where the cache answers most asks (white space)
// it is read first, and the filters only on a miss; where it answers few (random letters,
// whose pairs rarely repeat), the callers read the filters first and ask only for the
// candidates that pass them. choose (cut.go) chooses, from the misses that pairRank counts.
func (v *vocab) pairRank(sc *scratch, a, b uint32, t string) uint32 {
	key := uint64(1)<<42 | uint64(a)<<20 | uint64(b)
	i := (key * hm1) >> (64 - cacheBits)
	if e := sc.cache[i]; e>>21 == key {
		if r := uint32(e) & low21; r != low21 {
			return r
		}
		return noRank
	}
	return v.pairRankMiss(sc, key, i, t)
}

// pairRankMiss is pairRank after a miss of the cache at entry i, for the pair key.
func (v *vocab) pairRankMiss(sc *scratch, key, i uint64, t string) uint32 {
	sc.prMiss++
	var r uint32
	if c := sc.cut; c == nil || sc.filtersFirst || len(t) < 3 {
		r = v.rank(t)
	} else {
		r = v.filteredRankAt(c, unsafe.Pointer(unsafe.StringData(t)), len(t))
	}
	sc.cache[i] = key<<21 | uint64(r&low21)
	return r
}

const low21 = 1<<21 - 1

// node describes the part that starts at a byte of the piece, while one does, in 8 bytes so
// that the nodes of a long piece stay in cache. A part is a token, so its length and its
// predecessor's fit in 8 bits (tokens are at most 255 bytes).
type node struct {
	rl uint32 // rank of this part joined with the next one (noRank20 for none) | length<<20
	tp uint32 // this part's token | length of the previous part<<20 (0 for the first)
}

const (
	noRank20 = 1<<20 - 1
	low20    = 1<<20 - 1
)

func (n node) rank() uint32 { return n.rl & low20 }
func (n node) len() int32   { return int32(n.rl >> 20) }
func (n node) plen() int32  { return int32(n.tp >> 20) }

// mergeRec records one merge of a run: its key (rank<<32 | start of the merged part) and the
// end of the merged part, both relative to the start of the run.
type mergeRec struct {
	key uint64
	end int32
}

// spare keeps a few scratches for reuse. Unlike a sync.Pool it is not emptied by garbage
// collections and serves every P, so that Count allocates nothing in steady state; it keeps
// at most spareMax of them, none grown for a piece longer than spareLen.
var spare struct {
	sync.Mutex
	list []*scratch
}

const (
	spareMax = 8
	spareLen = 1 << 17
)

func getScratch() *scratch {
	spare.Lock()
	defer spare.Unlock()
	if n := len(spare.list); n > 0 {
		sc := spare.list[n-1]
		spare.list = spare.list[:n-1]
		return sc
	}
	return new(scratch)
}

func putScratch(sc *scratch, pieceLen int) {
	if pieceLen > spareLen {
		return
	}
	spare.Lock()
	if len(spare.list) < spareMax {
		spare.list = append(spare.list, sc)
	}
	spare.Unlock()
}

// mergeLong merges a piece of any length (≥ 2) with run, in one piece.
func (v *vocab) mergeLong(p string, sc *scratch, out []int) ([]int, int) {
	sc.toks = v.run(p, 0, len(p), sc, sc.toks[:0], nil)
	if out != nil {
		for _, t := range sc.toks {
			out = append(out, int(t))
		}
	}
	return out, len(sc.toks)
}

// run merges p[lo:hi] (≥ 2 bytes) in O(n log n), and in practice in close to linear time:
// the pairs of the initial bytes are radix-sorted once and consumed in order, and only the
// pairs that merges create go through a binary heap. Each step takes the smaller
// (rank, start) of the two queues, skipping stale entries, which is the lowest-rank,
// leftmost pair: the one tiktoken's scan would pick. It appends the tokens to toks and, when
// rec is not nil, each merge in order to *rec. Ranks must be below noRank20 (parseVocab
// checks).
func (v *vocab) run(p string, lo, hi int, sc *scratch, toks []uint32, rec *[]mergeRec) []uint32 {
	p = p[lo:hi]
	n := len(p)
	if cap(sc.nodes) < n {
		c := max(n, 2*cap(sc.nodes))
		sc.nodes = make([]node, c)
		sc.init = make([]uint64, c)
		sc.tmp = make([]uint64, c)
	}
	if sc.cacheOf != v {
		clear(sc.cache[:])
		sc.cacheOf = v
	}
	nodes := sc.nodes[:n]
	init := sc.init[:0]
	for i := 0; i < n-1; i++ {
		r := uint32(v.pair[int(p[i])<<8|int(p[i+1])])
		nodes[i] = node{rl: r&low20 | 1<<20, tp: v.byte1[p[i]] | 1<<20}
		if r != noRank {
			init = append(init, uint64(r)<<32|uint64(i))
		}
	}
	nodes[0].tp &= low20
	nodes[n-1] = node{rl: noRank20 | 1<<20, tp: v.byte1[p[n-1]] | 1<<20}
	if len(init) <= smallSort {
		slices.Sort(init) // the keys differ in their starts: sorted by rank, then start
	} else {
		init = radixSortByRank(init, sc.tmp[:len(init)])
	}
	h := sc.heap[:0]
	for {
		// The next pair: the smaller head of the two queues.
		var top uint64
		if len(h) > 0 && (len(init) == 0 || h[0] < init[0]) {
			top = h[0]
			last := len(h) - 1
			h[0] = h[last]
			h = h[:last]
			if last > 1 {
				siftDown(h, 0)
			}
		} else if len(init) > 0 {
			top = init[0]
			init = init[1:]
		} else {
			break
		}
		i, r := int32(uint32(top)), uint32(top>>32)
		a := nodes[i]
		if a.rank() != r {
			continue // stale: the pair at i changed or i was merged away
		}
		j := i + a.len()
		k := j + nodes[j].len() // the merged part is p[i:k]
		if rec != nil {
			*rec = append(*rec, mergeRec{key: uint64(r)<<32 | uint64(i), end: k})
		}
		nodes[j].rl |= noRank20
		a = node{rl: noRank20 | uint32(k-i)<<20, tp: r | a.tp&^low20}
		if int(k) < n {
			c := &nodes[k]
			c.tp = c.tp&low20 | uint32(k-i)<<20
			if r2 := v.pairRank(sc, r, c.tp&low20, p[i:k+c.len()]); r2 != noRank {
				a.rl = r2 | uint32(k-i)<<20
				h = append(h, uint64(r2)<<32|uint64(i))
				siftUp(h, len(h)-1)
			}
		}
		nodes[i] = a
		if i > 0 {
			q := i - a.plen()
			r3 := v.pairRank(sc, nodes[q].tp&low20, r, p[q:k])
			nodes[q].rl = nodes[q].rl&^low20 | r3&low20
			if r3 != noRank {
				h = append(h, uint64(r3)<<32|uint64(q))
				siftUp(h, len(h)-1)
			}
		}
	}
	sc.heap = h
	for i := int32(0); int(i) < n; i += nodes[i].len() {
		toks = append(toks, nodes[i].tp&low20)
	}
	return toks
}

// smallSort: at most this many initial pairs are sorted by comparison; the radix sort's
// passes over its 2048 counters cost more than that on short runs (the segments of cut.go).
const smallSort = 512

// radixSortByRank sorts entries rank<<32 | start by rank, keeping the order of equal ranks
// (entries come in increasing start), with tmp as the buffer (len(tmp) == len(a)); ranks are
// below 2^22. It returns the sorted slice (a or tmp).
func radixSortByRank(a, tmp []uint64) []uint64 {
	const bits = 11
	var count [1 << bits]int32
	for shift := uint(32); shift < 32+2*bits; shift += bits {
		clear(count[:])
		for _, x := range a {
			count[(x>>shift)&(1<<bits-1)]++
		}
		sum := int32(0)
		for d, c := range count {
			count[d] = sum
			sum += c
		}
		for _, x := range a {
			d := (x >> shift) & (1<<bits - 1)
			tmp[count[d]] = x
			count[d]++
		}
		a, tmp = tmp, a
	}
	return a
}

// The heap is 4-ary: half the levels of a binary heap, and a node's children share a cache line.

func siftDown(h []uint64, i int) {
	n := len(h)
	x := h[i]
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		// The smallest of the up to four children c..c+3.
		m, mv := c, h[c]
		if c+3 < n {
			if v := h[c+1]; v < mv {
				m, mv = c+1, v
			}
			if v := h[c+2]; v < mv {
				m, mv = c+2, v
			}
			if v := h[c+3]; v < mv {
				m, mv = c+3, v
			}
		} else {
			for k := c + 1; k < n; k++ {
				if v := h[k]; v < mv {
					m, mv = k, v
				}
			}
		}
		if mv >= x {
			break
		}
		h[i] = mv
		i = m
	}
	h[i] = x
}

func siftUp(h []uint64, i int) {
	x := h[i]
	for i > 0 {
		p := (i - 1) / 4
		if h[p] <= x {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = x
}
