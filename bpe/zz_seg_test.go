package bpe

import (
	"fmt"
	"testing"
)

func TestZZSegStats(t *testing.T) {
	for _, name := range Names() {
		e := mustGet(t, name)
		for _, cls := range []string{"letters", "whitespace"} {
			var s string
			for _, c := range inputClasses {
				if c.name == cls {
					s = c.gen(1 << 20)
				}
			}
			c := e.v.cuts()
			var hist [8]int
			var bytesIn [8]int
			var toks [8]int
			seg := func(a, b int) {
				n := b - a
				k := 0
				switch {
				case n <= 2:
				case n <= 8:
					k = 1
				case n <= 16:
					k = 2
				case n <= 24:
					k = 3
				case n <= 48:
					k = 4
				case n <= 96:
					k = 5
				case n <= 1024:
					k = 6
				default:
					k = 7
				}
				hist[k]++
				bytesIn[k] += n
				_, nt := e.v.mergeLong(s[a:b], new(scratch), nil)
				toks[k] += nt
			}
			p := s
			if cls == "whitespace" {
				// first piece only
				j := e.split(s, 0)
				p = s[:j]
			}
			start := 0
			for x := 1; x < len(p)-1; x++ {
				if !c.hasPair(p[x-1], p[x]) && !(x >= 2 && c.hasTri(p[x-2], p[x-1], p[x])) && !c.hasTri(p[x-1], p[x], p[x+1]) {
					seg(start, x)
					start = x
				}
			}
			seg(start, len(p))
			fmt.Println(name, cls, len(p), "segs<=2,<=8,<=16,<=24,<=48,<=96,<=1024,>", hist, "bytes", bytesIn, "toks", toks)
		}
	}
}
