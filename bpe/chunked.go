package bpe

// Very long pieces (a 64 KiB word, a base64 blob) are merged in chunks of about chunkSize
// bytes, which keeps each run's working set in cache, with a proof per junction that the
// whole piece would merge to the same tokens.
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
// A junction that fails joins its two chunks, which are merged again as one; its new
// junctions are checked again. Too much rework falls back to merging the whole piece.

// chunkedPiece: pieces at least this long are merged in chunks.
const chunkedPiece = 16384

// chunkSize is the target length of a chunk.
const chunkSize = 2048

// chunk is one chunk's run: bytes [lo, hi) of the piece, its tokens sc.toks[tok:tok+ntok]
// and its merges sc.seq[seq:seq+nseq].
type chunk struct {
	lo, hi    int
	tok, ntok int
	seq, nseq int
}

func (v *vocab) runChunk(p string, lo, hi int, sc *scratch) chunk {
	c := chunk{lo: lo, hi: hi, tok: len(sc.toks), seq: len(sc.seq)}
	sc.toks = v.run(p, lo, hi, sc, sc.toks, &sc.seq)
	c.ntok = len(sc.toks) - c.tok
	c.nseq = len(sc.seq) - c.seq
	return c
}

// mergeChunked merges a long piece chunk by chunk (see above).
func (v *vocab) mergeChunked(p string, sc *scratch, out []int) ([]int, int) {
	n := len(p)
	sc.toks, sc.seq, sc.chunks = sc.toks[:0], sc.seq[:0], sc.chunks[:0]
	for lo := 0; lo < n; {
		hi := n
		if n-lo >= 2*chunkSize {
			hi = v.cut(p, lo+chunkSize)
		}
		sc.chunks = append(sc.chunks, v.runChunk(p, lo, hi, sc))
		lo = hi
	}
	work := n
	for i := 0; i+1 < len(sc.chunks); {
		a, b := sc.chunks[i], sc.chunks[i+1]
		if v.junctionOK(p, a.hi, sc.seq[a.seq:a.seq+a.nseq], sc.seq[b.seq:b.seq+b.nseq]) {
			i++
			continue
		}
		if work += b.hi - a.lo; work > 3*n {
			return v.mergeLong(p, sc, out)
		}
		sc.chunks[i] = v.runChunk(p, a.lo, b.hi, sc)
		sc.chunks = append(sc.chunks[:i+1], sc.chunks[i+2:]...)
		if i > 0 {
			i-- // the joined chunk's left junction must be checked again
		}
	}
	count := 0
	for _, c := range sc.chunks {
		count += c.ntok
		if out != nil {
			for _, t := range sc.toks[c.tok : c.tok+c.ntok] {
				out = append(out, int(t))
			}
		}
	}
	return out, count
}

// cut returns a cut position near t: within 32 bytes, the one whose crossing byte pair has
// the highest rank (or is no token), so that merges are unlikely to cross it.
func (v *vocab) cut(p string, t int) int {
	best, bestRank := t, uint32(0)
	for x := t - 32; x <= t+32; x++ {
		if r := uint32(v.pair[int(p[x-1])<<8|int(p[x])]); r >= bestRank {
			best, bestRank = x, r
		}
	}
	return best
}

// junctionOK reports whether merging the whole of L‖R (cut at x) never merges across x,
// given the merge sequences of L's run (seqL) and R's run (seqR).
func (v *vocab) junctionOK(p string, x int, seqL, seqR []mergeRec) bool {
	const inf = ^uint64(0)
	aStart, bEnd := x-1, x+1 // X is p[aStart:x] joined with p[x:bEnd]
	xKey := v.pairKey(p, aStart, bEnd)
	for iL, iR := 0, 0; ; {
		hL, hR := inf, inf
		if iL < len(seqL) {
			hL = seqL[iL].key
		}
		if iR < len(seqR) {
			hR = seqR[iR].key
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
			if int(m.end) == x { // L's last part grew
				aStart = int(uint32(m.key))
				xKey = v.pairKey(p, aStart, bEnd)
			}
		} else {
			m := seqR[iR]
			iR++
			if int(uint32(m.key)) == x { // R's first part grew
				bEnd = int(m.end)
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
