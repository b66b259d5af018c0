package convention

import (
	"strings"
	"testing"

	"github.com/parleyhq/parley/bpe"
)

// o200k is the counter the package's tests lint with, as the room server does: the exact
// token figures of TokenEncoding.
var o200k = mustCounter()

func mustCounter() Counter {
	enc, err := bpe.Get(TokenEncoding)
	if err != nil {
		panic(err)
	}
	return enc
}

// Without a counter Lint still runs and still puts a figure on a cost, estimated at about
// four bytes a token; with one, the figure is the encoding's.
func TestLintCounter(t *testing.T) {
	src := "v1 report limiter to lead n=1\noutcome partial \U0001F680\U0001F680\n"
	m, _ := Parse(src)
	msg := func(opt Options) string {
		for _, d := range Lint(m, opt) {
			if d.Code == "emoji" {
				return d.Message
			}
		}
		return ""
	}
	if got := msg(Options{Counter: o200k}); !strings.Contains(got, "costs 4 tokens") {
		t.Errorf("with o200k_base: %q, want the encoding's 4 tokens", got)
	}
	if got := msg(Options{}); !strings.Contains(got, "costs 2 tokens") {
		t.Errorf("without a counter: %q, want the estimate of 8 bytes as 2 tokens", got)
	}
}
