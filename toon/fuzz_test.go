package toon

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzEncode feeds arbitrary JSON through ParseJSON and Encode. Whatever parses must
// encode without panicking, encode the same way twice, keep the line-structure guarantees
// of the package doc, and decode back (with the test decoder) to the same value, whichever
// delimiter is chosen.
func FuzzEncode(f *testing.F) {
	// Seeds: every golden input, plus shapes that stress quoting and list layout.
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, name := range files {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data, uint8(0))
		}
	}
	f.Add([]byte(`{"s":" - a:b\n\"[x]\" ","n":-0.0e-0}`), uint8(1))
	f.Add([]byte(`[[[]],[{}],{"":[{"a":[1]}]}]`), uint8(2))
	f.Add([]byte(`{"t":[{"a|b":"c\td","e":1e300}]}`), uint8(1))
	f.Add([]byte(`"\u2028\ufeff"`), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, d uint8) {
		v, err := ParseJSON(data)
		if err != nil {
			return
		}
		opts := Options{Delimiter: []Delimiter{Comma, Tab, Pipe}[int(d)%3]}
		out, err := EncodeOptions(v, opts)
		if err != nil {
			return // only numbers too long to write in plain decimal are refused
		}
		again, err := EncodeOptions(v, opts)
		if err != nil || again != out {
			t.Fatalf("encoding is not deterministic:\n%q\n%q", out, again)
		}
		checkInvariants(t, out, 2)
		roundTrip(t, v, out, 2)
	})
}
