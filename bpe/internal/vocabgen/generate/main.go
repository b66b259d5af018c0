// Command generate writes bpe/data/*.bin; run by `go generate` in the bpe folder.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/parleyhq/parley/bpe/internal/vocabgen"
)

func main() {
	out := "data"
	if len(os.Args) > 1 {
		out = os.Args[1]
	}
	for _, name := range vocabgen.Names {
		src, err := vocabgen.Source(name)
		if err == nil {
			var bin []byte
			if bin, err = vocabgen.Compact(name, src); err == nil {
				err = os.WriteFile(filepath.Join(out, name+".bin"), bin, 0o644)
				fmt.Printf("%s: %d bytes of .tiktoken -> %d bytes\n", name, len(src), len(bin))
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "generate:", err)
			os.Exit(1)
		}
	}
}
