package bpe

// Very long pieces (a 64 KiB word, a base64 blob, a megabyte of spaces) are merged in chunks
// of a few KiB, which keeps each run's working set in cache and the memory bounded, with a
// proof per junction that the whole piece would merge to the same tokens.
//
// Why the proof is exact. Let the piece be L‖R, cut at x. Run the merge on L alone and on R
// alone, recording each run's merges in order. The merge of the whole piece always picks the
// lowest (rank, position) among its valid pairs: those of L's current parts, those of R's,
// and the one pair X that crosses x (L's last part joined with R's first). As long as it
// does not pick X, it picks the lower of L's next merge and R's next merge (each run's next
// merge is the lowest of its own pairs), so each side evolves exactly as in its own run, and
// the whole piece's result is L's tokens followed by R's. junctionOK replays the two
// recorded sequences in that interleaved order, updates X as L's last part and R's first part
// grow, and reports whether X would ever be the lowest (or still be a token when both runs
// are done). With several chunks, merges in other chunks only delay these decisions, so the
// check of each junction against its two neighbours suffices once every junction passes.
// Where chunks are cut, and what a failing junction does, is described at mergeChunked.

// chunkedPiece: pieces at least this long are merged in chunks.
const chunkedPiece = 16384

// Chunks are cut where the merge of a window of the piece puts a token boundary: each step
// merges the window of up to window bytes that starts at the end of the previous chunk, and
// cuts it at its last token boundary at most window-margin bytes from its start. The window's
// left end is the previous cut, so its tokens far from its right end are almost always the
// whole piece's (in a run of one byte, whose tokens repeat with a period set by the left
// end, they always are); the junction proof decides. Cutting where the window cuts also
// gives the chunk's run for free: no merge of the window crosses the cut, so the window's
// merges left of it are exactly the chunk's own run (the argument above, read backwards).
//
// A window whose bytes are those of the previous chunk's window merges the same way, so its
// chunk reuses that run (a run of spaces or of one letter costs a comparison per window).
const (
	window = 8192
	margin = 256
)

// pendingMax: chunks are counted (and their tokens appended) once this many chunks follow
// them, so that memory stays bounded by a few windows however long the piece is.
const pendingMax = 4

// chunk is one chunk's run: bytes [lo, hi) of the piece, its tokens sc.toks[tok:tok+ntok]
// and its merges sc.seq[seq:seq+nseq] (positions relative to lo). win is the length of the
// window it was cut from, 0 for a chunk merged whole.
type chunk struct {
	lo, hi    int
	tok, ntok int
	seq, nseq int
	win       int
}

// runChunk merges p[lo:hi] as one run.
func (v *vocab) runChunk(p string, lo, hi int, sc *scratch) chunk {
	c := chunk{lo: lo, hi: hi, tok: len(sc.toks), seq: len(sc.seq)}
	sc.toks = v.run(p, lo, hi, sc, sc.toks, &sc.seq)
	c.ntok = len(sc.toks) - c.tok
	c.nseq = len(sc.seq) - c.seq
	return c
}

// windowChunk merges the window of p that starts at lo and returns the chunk cut from it
// (see above); the last window of the piece is a chunk whole. prev is the previous chunk.
func (v *vocab) windowChunk(p string, lo int, prev *chunk, sc *scratch) chunk {
	hi := min(len(p), lo+window)
	if prev != nil && prev.win == hi-lo && prev.hi < len(p) && p[lo:hi] == p[prev.lo:prev.lo+prev.win] {
		c := *prev
		c.lo, c.hi = lo, lo+(prev.hi-prev.lo)
		return c
	}
	c := v.runChunk(p, lo, hi, sc)
	if hi == len(p) {
		return c
	}
	c.win = hi - lo
	// The window's tokens start at lo and follow each other by their lengths (run leaves
	// the final parts in sc.nodes, relative to lo): keep those that start by the target.
	x, k := int32(0), 0
	for {
		next := x + sc.nodes[x].len()
		if next > window-margin {
			break
		}
		x = next
		k++
	}
	if x == 0 { // a token longer than window-margin bytes: impossible while tokens are < 256 bytes
		c.win = 0
		return c
	}
	c.hi = lo + int(x)
	c.ntok = k
	sc.toks = sc.toks[:c.tok+k]
	// Keep the merges left of the cut, in order.
	w := c.seq
	for _, m := range sc.seq[c.seq : c.seq+c.nseq] {
		if m.end <= x {
			sc.seq[w] = m
			w++
		}
	}
	c.nseq = w - c.seq
	sc.seq = sc.seq[:w]
	return c
}

// mergeChunked merges a long piece chunk by chunk (see above), holding only the last few
// chunks' runs. A junction that fails joins its two chunks, which are merged again as one
// run and checked against their left neighbour; if that would reach a chunk already counted,
// or too much work is redone, the whole piece is merged in one run instead.
func (v *vocab) mergeChunked(p string, sc *scratch, out []int) ([]int, int) {
	n := len(p)
	out0 := len(out)
	sc.toks, sc.seq, sc.chunks = sc.toks[:0], sc.seq[:0], sc.chunks[:0]
	count, work := 0, 0
	emit := func(c chunk) {
		count += c.ntok
		if out != nil {
			for _, t := range sc.toks[c.tok : c.tok+c.ntok] {
				out = append(out, int(t))
			}
		}
	}
	emitted := false // whether a chunk was counted: its right junction can no longer move
	var last chunk   // the last chunk appended
	for lo := 0; lo < n; {
		var prev *chunk
		if lo > 0 {
			prev = &last
		}
		c := v.windowChunk(p, lo, prev, sc)
		work += c.hi - lo
		lo = c.hi
		last = c
		sc.chunks = append(sc.chunks, c)
		for k := len(sc.chunks) - 1; k > 0; k-- {
			a, b := sc.chunks[k-1], sc.chunks[k]
			if v.junctionOK(p, a, b, sc) {
				break
			}
			if work += b.hi - a.lo; work > 3*n || (k == 1 && emitted) {
				if out != nil {
					out = out[:out0]
				}
				return v.mergeLong(p, sc, out)
			}
			sc.chunks[k-1] = v.runChunk(p, a.lo, b.hi, sc)
			sc.chunks = sc.chunks[:k]
			last = sc.chunks[k-1]
		}
		if len(sc.chunks) > pendingMax {
			emit(sc.chunks[0])
			emitted = true
			sc.chunks = append(sc.chunks[:0], sc.chunks[1:]...)
			sc.compact()
		}
	}
	for _, c := range sc.chunks {
		emit(c)
	}
	return out, count
}

// compact moves the pending chunks' tokens and merges to the front of sc.toks and sc.seq
// once the runs merged since the last compaction have filled them.
func (sc *scratch) compact() {
	if len(sc.seq) < 4*pendingMax*window {
		return
	}
	t, s := 0, 0
	for i := range sc.chunks {
		c := &sc.chunks[i]
		copy(sc.toks[t:], sc.toks[c.tok:c.tok+c.ntok])
		copy(sc.seq[s:], sc.seq[c.seq:c.seq+c.nseq])
		c.tok, c.seq = t, s
		t += c.ntok
		s += c.nseq
	}
	sc.toks, sc.seq = sc.toks[:t], sc.seq[:s]
}

// junctionOK reports whether merging the whole of L‖R (chunks a and b, cut at x = a.hi)
// never merges across x, given their runs' merge sequences.
func (v *vocab) junctionOK(p string, a, b chunk, sc *scratch) bool {
	return v.junction(p, a.hi, a.lo, sc.seq[a.seq:a.seq+a.nseq], sc.seq[b.seq:b.seq+b.nseq])
}

// junction is junctionOK on the merge sequences of the runs of p[loL:x] (seqL) and p[x:...]
// (seqR), their positions relative to loL and x.
func (v *vocab) junction(p string, x, loL int, seqL, seqR []mergeRec) bool {
	const inf = ^uint64(0)
	aStart, bEnd := x-1, x+1 // X is p[aStart:x] joined with p[x:bEnd]
	xKey := v.pairKey(p, aStart, bEnd)
	offL, offR := uint64(loL), uint64(x) // keys made absolute
	for iL, iR := 0, 0; ; {
		hL, hR := inf, inf
		if iL < len(seqL) {
			hL = seqL[iL].key + offL
		}
		if iR < len(seqR) {
			hR = seqR[iR].key + offR
		}
		if xKey < min(hL, hR) {
			return false // the whole piece would merge X now (or at the end)
		}
		if hL == inf && hR == inf {
			return true
		}
		if hL < hR {
			m := seqL[iL]
			iL++
			if loL+int(m.end) == x { // L's last part grew
				aStart = int(uint32(hL))
				xKey = v.pairKey(p, aStart, bEnd)
			}
		} else {
			m := seqR[iR]
			iR++
			if int(uint32(hR)) == x { // R's first part grew
				bEnd = x + int(m.end)
				xKey = v.pairKey(p, aStart, bEnd)
			}
		}
	}
}

// pairKey is the key (rank<<32 | start) of the pair p[i:j], or the maximum when it is no
// token.
func (v *vocab) pairKey(p string, i, j int) uint64 {
	if r := v.rank(p[i:j]); r != noRank {
		return uint64(r)<<32 | uint64(i)
	}
	return ^uint64(0)
}
