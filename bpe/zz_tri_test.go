package bpe

import (
	"fmt"
	"math/bits"
	"testing"
)

func TestZZTri(t *testing.T) {
	for _, name := range Names() {
		v := mustGet(t, name).v
		c := v.cuts()
		occ := 0
		for r := 0; r+1 < len(v.off); r++ {
			if l := int(v.off[r+1] - v.off[r]); l >= 3 {
				occ += l - 2
			}
		}
		set := 0
		big := 0
		prev := -1
		for w, x := range c.tri {
			set += bits.OnesCount64(x)
			for x != 0 {
				b := bits.TrailingZeros64(x)
				x &= x - 1
				k := w*64 + b
				if k-prev >= 128 {
					big++
				}
				prev = k
			}
		}
		fmt.Println(name, "occurrences", occ, "distinct", set, "gaps>=128", big)
	}
}
