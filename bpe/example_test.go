package bpe_test

import (
	"fmt"

	"github.com/parleyhq/parley/bpe"
)

func ExampleEncoding_Encode() {
	enc, err := bpe.Get("o200k_base")
	if err != nil {
		panic(err)
	}
	ids := enc.Encode("hello world")
	fmt.Println(ids, enc.Count("hello world"), string(enc.Decode(ids)))
	// Special-token text is ordinary text.
	fmt.Println(enc.Count("<|endoftext|>"))
	// Output:
	// [24912 2375] 2 hello world
	// 7
}

func ExampleEncoding_AppendEncode() {
	enc, _ := bpe.Get("cl100k_base")
	var ids []int
	for _, part := range []string{"It's ", "a test."} {
		ids = enc.AppendEncode(ids, part)
	}
	fmt.Println(ids)
	// Each call encodes its own text: the whole text can encode differently.
	fmt.Println(enc.Encode("It's a test."))
	// Output:
	// [2181 596 220 64 1296 13]
	// [2181 596 264 1296 13]
}
