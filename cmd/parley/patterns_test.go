package main

import (
	"testing"

	"github.com/parleyhq/parley/internal/lazyre"
)

// TestPatternsCompile: the regular expressions of every package the binary links are compiled
// on first use (internal/lazyre), so a pattern that does not compile would only fail when a
// post or a command first needs it; this compiles them all.
func TestPatternsCompile(t *testing.T) {
	if n := lazyre.MustCompileAll(); n < 40 {
		t.Fatalf("%d patterns registered, want most of the binary's 51 (has a package stopped using lazyre?)", n)
	}
}
