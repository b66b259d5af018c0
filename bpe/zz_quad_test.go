package bpe

import (
	"fmt"
	"testing"
)

func TestZZQuad(t *testing.T) {
	for _, name := range Names() {
		e := mustGet(t, name)
		v := e.v
		c := v.cuts()
		tok3 := map[string]bool{}
		in4 := map[string]bool{}
		for r := 0; r+1 < len(v.off); r++ {
			tk := v.blob[v.off[r]:v.off[r+1]]
			if len(tk) == 3 {
				tok3[tk] = true
			}
			for i := 0; i+4 <= len(tk); i++ {
				in4[tk[i:i+4]] = true
			}
		}
		fmt.Println(name, "distinct 4-grams", len(in4))
		for _, cls := range []string{"letters", "whitespace", "Letters"} {
			var s string
			for _, ic := range inputClasses {
				if ic.name == cls {
					s = ic.gen(1 << 20)
				}
			}
			p := s[:e.split(s, 0)]
			n3, n4, np := 0, 0, 0
			for x := 3; x+3 < len(p); x++ {
				if c.hasPair(p[x-1], p[x]) {
					np++
					continue
				}
				if !c.hasTri(p[x-2], p[x-1], p[x]) && !c.hasTri(p[x-1], p[x], p[x+1]) {
					n3++
				}
				if !tok3[p[x-2:x+1]] && !tok3[p[x-1:x+2]] && !in4[p[x-3:x+1]] && !in4[p[x-2:x+2]] && !in4[p[x-1:x+3]] {
					n4++
				}
			}
			fmt.Println(name, cls, len(p), "pair-token positions", np, "cuts3", n3, "cuts4", n4)
		}
	}
}
