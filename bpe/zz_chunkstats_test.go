package bpe

import (
	"os"
	"strings"
	"testing"
)

func TestZZChunkStats(t *testing.T) {
	if os.Getenv("ZZCPU") == "" {
		t.Skip()
	}
	sc := new(scratch)
	for _, name := range Names() {
		v := mustGet(t, name).v
		for gname, p := range map[string]string{"letters": longWord(1 << 16), "a": strings.Repeat("a", 1<<16), "ab": strings.Repeat("ab", 1<<15), "corpusish": strings.Repeat("thequickbrownfoxjumpsoverthelazydog", 2000)} {
			fails := 0
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
			for i := 0; i+1 < len(sc.chunks); i++ {
				a, b := sc.chunks[i], sc.chunks[i+1]
				if !v.junctionOK(p, a.hi, sc.seq[a.seq:a.seq+a.nseq], sc.seq[b.seq:b.seq+b.nseq]) {
					fails++
				}
			}
			t.Logf("%s %s: %d chunks, %d junctions fail", name, gname, len(sc.chunks), fails)
		}
	}
}
