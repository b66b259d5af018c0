package bpe

import (
	"os"
	"strconv"
	"testing"
)

var drvSink int

func TestZZDriver(t *testing.T) {
	cls := os.Getenv("DRV_CLASS")
	if cls == "" {
		t.Skip()
	}
	size, _ := strconv.Atoi(os.Getenv("DRV_SIZE"))
	e := mustGet(t, os.Getenv("DRV_ENC"))
	var s string
	if cls == "corpus" {
		b, err := os.ReadFile("../../shared/tokvec/corpus.txt")
		if err != nil {
			t.Fatal(err)
		}
		s = string(b)
	} else {
		for _, c := range inputClasses {
			if c.name == cls {
				s = c.gen(size)
			}
		}
	}
	if os.Getenv("DRV_COUNT") != "" {
		drvSink = e.Count(s)
	}
	t.Logf("len %d count %d", len(s), drvSink)
}
