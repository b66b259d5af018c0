package bpe

import (
	"flag"
	"os"
	"runtime"
	"slices"
	"testing"
	"unsafe"

	"github.com/parleyhq/parley/bpe/internal/vocabgen"
)

// TestVocabMatchesLoader checks that the embedded data/*.bin equal what the generator makes
// from tiktoken-go-loader's .tiktoken files (which it checks against OpenAI's pinned SHA-256).
func TestVocabMatchesLoader(t *testing.T) {
	for _, e := range encodings {
		src, err := vocabgen.Source(e.name)
		if err != nil {
			t.Fatal(err)
		}
		want, err := vocabgen.Compact(e.name, src)
		if err != nil {
			t.Fatal(err)
		}
		if string(want) != e.data {
			t.Errorf("%s: data/%s.bin differs from the generator's output; run go generate", e.name, e.name)
		}
	}
}

// TestDataSupply checks what the format lab relies on: Data hands out the bytes Get loads,
// and Supply accepts exactly those bytes in a build that embeds them.
func TestDataSupply(t *testing.T) {
	for _, name := range Names() {
		d, err := Data(name)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile("data/" + name + ".bin")
		if err != nil {
			t.Fatal(err)
		}
		if d != string(want) {
			t.Errorf("Data(%s) is not data/%s.bin", name, name)
		}
		if err := Supply(name, d); err != nil {
			t.Errorf("Supply(%s, its own data): %v", name, err)
		}
		if err := Supply(name, d[:len(d)-1]); err == nil {
			t.Errorf("Supply(%s, other bytes) was accepted", name)
		}
	}
	if _, err := Data("p50k_base"); err == nil {
		t.Error("Data of an unknown encoding gave no error")
	}
}

var updateTables = flag.Bool("update-tables", false, "rewrite data/*.tab from a fresh build of the tables")

// TestTables checks that the embedded tables (data/*.tab) are exactly what parseVocab builds
// from the vocabulary, and that the encodings use them; and that the embedded lists of
// three-byte strings (data/*.tri) are those of the tokens and read back to the same bitmap, and
// the unit tables (data/*.unit) those built from the tokens.
func TestTables(t *testing.T) {
	for _, e := range encodings {
		built, err := parseVocab(e.data, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		want := built.writeTables()
		path := "data/" + e.name + ".tab"
		tri := built.buildTri()
		wantTri := writeTri(tri)
		triPath := "data/" + e.name + ".tri"
		units := built.buildUnits()
		wantUnits := writeUnits(units)
		unitPath := "data/" + e.name + ".unit"
		if *updateTables {
			if err := os.WriteFile(unitPath, wantUnits, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(triPath, wantTri, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if string(wantUnits) != e.units {
			t.Errorf("%s: %s differs from the unit tables built from the tokens; run go generate", e.name, unitPath)
		} else if read := readUnits(e.units, built.n); read == nil || read.ctx != units.ctx || !slices.Equal(read.ext, units.ext) {
			t.Errorf("%s: %s does not read back as the tables it was written from", e.name, unitPath)
		}
		if string(wantTri) != e.tri {
			t.Errorf("%s: %s differs from the three-byte strings of the tokens; run go generate", e.name, triPath)
		} else if read := readTri(e.tri); read == nil || *read != *tri {
			t.Errorf("%s: %s does not read back as the bitmap it was written from", e.name, triPath)
		}
		if string(want) != e.tab {
			t.Errorf("%s: %s differs from the tables parseVocab builds; run go generate", e.name, path)
			continue
		}
		loaded, err := parseVocab(e.data, e.tab, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(loaded.hot, built.hot) || !slices.Equal(loaded.table, built.table) || !slices.Equal(loaded.filter, built.filter) ||
			*loaded.t3.pre != *built.t3.pre || *loaded.t3.preAt != *built.t3.preAt || !slices.Equal(loaded.t3.bits, built.t3.bits) ||
			!slices.Equal(loaded.t3.at, built.t3.at) || !slices.Equal(loaded.t3.ranks, built.t3.ranks) {
			t.Errorf("%s: the tables read from %s differ from the built ones", e.name, path)
		}
		if !new(vocab).readTables(e.tab, len(built.hot), len(built.table), len(built.filter), len(built.t3.bits), len(built.t3.ranks)) {
			t.Errorf("%s: %s is not read: the tables are built at every start", e.name, path)
		}
		// The linker aligns large data to 32 bytes on these machines; the header keeps the
		// tables so, and then no slot straddles two cache lines (see tabMagic).
		if runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64" {
			for _, tab := range [][]slot{loaded.hot, loaded.table} {
				if a := uintptr(unsafe.Pointer(&tab[0])); a%32 != 0 {
					t.Errorf("%s: a table read from %s starts at %#x, not 32-byte aligned", e.name, path, a)
				}
			}
		}
	}
}

// TestRankShort checks rank's written-out path for 3 to 8 bytes (rankShort) against the
// general one (keyHash and probe): every token of those lengths, and strings that are none.
func TestRankShort(t *testing.T) {
	for _, name := range Names() {
		v := mustGet(t, name).v
		for r := 0; r < v.n; r++ {
			tok := v.token(uint32(r))
			if len(tok) < 3 || len(tok) > 8 {
				continue
			}
			if got := v.rankShort(tok); got != uint32(r) {
				t.Fatalf("%s: rankShort(%q) = %d, want %d", name, tok, got, r)
			}
			for _, s := range []string{tok + "\x00", "\xff" + tok, tok[1:] + "q", tok[:len(tok)-1] + "\x01"} {
				k8, h := keyHash(s)
				want := v.probe(v.hot, v.hmask, s, k8, h)
				if want == noRank {
					want = v.probe(v.table, v.mask, s, k8, h)
				}
				if len(s) > 8 {
					continue
				}
				if got := v.rankShort(s); got != want {
					t.Fatalf("%s: rankShort(%q) = %d, want %d", name, s, got, want)
				}
			}
		}
	}
}

// TestRank3 checks the table of three-byte tokens (rank3, and its copy in rankShort) on every string of three bytes
// against the list of tokens itself, walked in byte order.
func TestRank3(t *testing.T) {
	for _, name := range Names() {
		v := mustGet(t, name).v
		type tok3 struct{ key, rank uint32 }
		var list []tok3
		for r := 0; r < v.n; r++ {
			if s := v.token(uint32(r)); len(s) == 3 {
				list = append(list, tok3{uint32(s[0])<<16 | uint32(s[1])<<8 | uint32(s[2]), uint32(r)})
			}
		}
		slices.SortFunc(list, func(a, b tok3) int { return int(a.key) - int(b.key) })
		if len(list) < 10000 {
			t.Fatalf("%s: only %d tokens of three bytes", name, len(list))
		}
		next := 0
		for k := range uint32(1 << 24) {
			want := noRank
			if next < len(list) && list[next].key == k {
				want = list[next].rank
				next++
			}
			b := [3]byte{byte(k >> 16), byte(k >> 8), byte(k)}
			if got := v.rank3(b[0], b[1], b[2]); got != want {
				t.Fatalf("%s: rank3(%q) = %d, want %d", name, b[:], int32(got), int32(want))
			}
			if got := v.rankShort(unsafe.String(&b[0], 3)); got != want {
				t.Fatalf("%s: rankShort(%q) = %d, want %d", name, b[:], int32(got), int32(want))
			}
		}
	}
}
