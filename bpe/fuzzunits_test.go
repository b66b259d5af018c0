package bpe

import "testing"

// FuzzReadUnits checks that readUnits never fails on a corrupt list other than by returning
// nil, and that what it reads writes back to the same bytes.
func FuzzReadUnits(f *testing.F) {
	f.Add(o200kUnits[:min(len(o200kUnits), 64)])
	f.Add(unitMagic + "\x01\x05\x07\x01\x03")
	f.Add(unitMagic + "\x00\x00")
	f.Fuzz(func(t *testing.T, s string) {
		u := readUnits(s, 1000)
		if u == nil {
			return
		}
		if got := string(writeUnits(u)); got != s {
			t.Fatalf("readUnits(%q) writes back as %q", s, got)
		}
	})
}
