package bpe

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// The reference in this file is github.com/pkoukk/tiktoken-go (regexp2 pre-tokenizer,
// tiktoken's quadratic merge) with the vocabularies of its offline loader: an independent
// implementation, used only by the tests and benchmarks.

var (
	refOnce sync.Once
	refEncs map[string]*tiktoken.Tiktoken
	refErr  error
)

func reference(t testing.TB, name string) *tiktoken.Tiktoken {
	t.Helper()
	refOnce.Do(func() {
		tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
		refEncs = map[string]*tiktoken.Tiktoken{}
		for _, n := range Names() {
			var e *tiktoken.Tiktoken
			if e, refErr = tiktoken.GetEncoding(n); refErr != nil {
				return
			}
			refEncs[n] = e
		}
	})
	if refErr != nil {
		t.Fatal(refErr)
	}
	return refEncs[name]
}

// refComparable reports whether tiktoken-go can be compared with tiktoken on s. It cannot
// on invalid UTF-8: it decodes the text to runes, so each invalid byte becomes U+FFFD
// (EF BF BD) and is encoded as such, while Encode keeps the bytes (see the package doc).
// It cannot either on characters that Unicode 15.1 or 16.0 added: its regexp2 pre-tokenizer
// uses Go's unicode tables (Unicode 15.0.0 in Go 1.26), where they are unassigned, while
// tiktoken's regex crate (and this package) use Unicode 16.0.0; testdata/tiktoken.jsonl and
// TestAgainstTiktokenJS check those against tiktoken itself. Inputs longer than 4 KiB are
// left out too, because tiktoken-go's merge is quadratic in the piece length and would stall
// the fuzzer; TestMergeImplementations and TestLongWord cover long pieces.
func refComparable(s string) bool {
	return len(s) <= 4096 && utf8.ValidString(s) && goUnicodeAgrees(s)
}

// FuzzAgainstReference compares Encode with tiktoken-go on valid UTF-8, for both encodings,
// and checks the invariants on any input: Count == len(Encode), Decode(Encode(s)) == s,
// AppendEncode appends.
func FuzzAgainstReference(f *testing.F) {
	for _, c := range readCases(f, "testdata/cases.jsonl") {
		f.Add(c.Text)
	}
	for _, c := range readCases(f, "testdata/tiktoken.jsonl") {
		f.Add(c.Text)
	}
	for _, s := range []string{"", "\xff", "a\xc3(b", "\xe2\x82 x", "it's\xf0\x9f", "  \xa0\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, name := range Names() {
			e := mustGet(t, name)
			got := e.Encode(s)
			if n := e.Count(s); n != len(got) {
				t.Fatalf("%s %q: Count = %d, len(Encode) = %d", name, s, n, len(got))
			}
			if d := e.Decode(got); string(d) != s {
				t.Fatalf("%s %q: Decode(Encode) = %q", name, s, d)
			}
			if a := e.AppendEncode([]int{-1}, s); a[0] != -1 || !slices.Equal(a[1:], got) {
				t.Fatalf("%s %q: AppendEncode differs from Encode", name, s)
			}
			if !refComparable(s) {
				continue
			}
			want := reference(t, name).EncodeOrdinary(s)
			if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Fatalf("%s %q:\n got  %v\n want %v (tiktoken-go)", name, s, got, want)
			}
		}
	})
}

// TestAgainstReferenceCorpus compares whole lines of the shared corpus with tiktoken-go.
func TestAgainstReferenceCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	corpus := readCorpus(t)
	lines := strings.SplitAfter(corpus, "\n")
	for _, name := range Names() {
		e, ref := mustGet(t, name), reference(t, name)
		for i := 0; i < len(lines); i += 7 { // a seventh of the lines: tiktoken-go is slow
			s := lines[i]
			if got, want := e.Encode(s), ref.EncodeOrdinary(s); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Fatalf("%s line %d %q:\n got  %v\n want %v", name, i+1, s, got, want)
			}
		}
	}
}
