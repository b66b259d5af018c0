package metrics

import (
	"strconv"
	"testing"
)

// TestStatusLabel compares the post counter's label with strconv over every status.
func TestStatusLabel(t *testing.T) {
	for s := 0; s < 1000; s++ {
		if got, want := statusLabel(s), strconv.Itoa(s); got != want {
			t.Errorf("statusLabel(%d) = %q, want %q", s, got, want)
		}
	}
}
