package bpe

import (
	"fmt"
	"testing"
)

func TestZZDbg(t *testing.T) {
	for _, name := range Names() {
		e := mustGet(t, name)
		for _, c := range inputClasses {
			if c.name != "letters" && c.name != "whitespace" {
				continue
			}
			s := c.gen(1 << 20)
			j := e.split(s, 0)
			var m merger
			sc := m.scratch(e.v)
			e.v.mergeCut(s[:j], nil, &m)
			fmt.Println(name, c.name, j, sc.triFirst, sc.prMiss)
			m.release()
		}
	}
}
