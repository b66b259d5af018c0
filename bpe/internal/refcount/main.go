// Command refcount is the reference program for the process benchmark of `parley tokens`:
// it counts the tokens of a file (or standard input) with github.com/pkoukk/tiktoken-go and
// the vocabularies embedded in its offline loader, and prints the count, as
// `parley tokens FILE` does. It is never linked into parley.
//
//	go build -o /tmp/refcount ./bpe/internal/refcount
//	hyperfine '/tmp/refcount -encoding o200k_base corpus.txt' 'parley tokens corpus.txt'
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

func main() {
	encoding := flag.String("encoding", "o200k_base", "o200k_base or cl100k_base")
	flag.Parse()
	var b []byte
	var err error
	if flag.NArg() == 0 || flag.Arg(0) == "-" {
		b, err = io.ReadAll(os.Stdin)
	} else {
		b, err = os.ReadFile(flag.Arg(0))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "refcount:", err)
		os.Exit(1)
	}
	tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding(*encoding)
	if err != nil {
		fmt.Fprintln(os.Stderr, "refcount:", err)
		os.Exit(1)
	}
	fmt.Println(len(enc.EncodeOrdinary(string(b))))
}
