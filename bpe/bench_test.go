package bpe

import (
	"testing"
)

// The benchmarks run over the shared 4 MB corpus (skipped without it). Compare
// BenchmarkEncode and BenchmarkCount with BenchmarkReference (tiktoken-go, same input) and
// the per-byte time of BenchmarkLongWord (one 64 KiB piece) with BenchmarkCount's.

func BenchmarkEncode(b *testing.B) {
	corpus := readCorpus(b)
	for _, name := range Names() {
		b.Run(name, func(b *testing.B) {
			e := mustGet(b, name)
			dst := e.AppendEncode(make([]int, 0, len(corpus)/2), corpus)
			b.SetBytes(int64(len(corpus)))
			b.ReportAllocs()
			for b.Loop() {
				dst = e.AppendEncode(dst[:0], corpus)
			}
		})
	}
}

func BenchmarkEncodeNew(b *testing.B) {
	corpus := readCorpus(b)
	for _, name := range Names() {
		b.Run(name, func(b *testing.B) {
			e := mustGet(b, name)
			b.SetBytes(int64(len(corpus)))
			b.ReportAllocs()
			for b.Loop() {
				e.Encode(corpus)
			}
		})
	}
}

func BenchmarkCount(b *testing.B) {
	corpus := readCorpus(b)
	for _, name := range Names() {
		b.Run(name, func(b *testing.B) {
			e := mustGet(b, name)
			e.Count(corpus) // grow the scratch once
			b.SetBytes(int64(len(corpus)))
			b.ReportAllocs()
			for b.Loop() {
				e.Count(corpus)
			}
		})
	}
}

// BenchmarkReference is tiktoken-go's EncodeOrdinary on the same corpus.
func BenchmarkReference(b *testing.B) {
	corpus := readCorpus(b)
	for _, name := range Names() {
		b.Run(name, func(b *testing.B) {
			ref := reference(b, name)
			b.SetBytes(int64(len(corpus)))
			b.ReportAllocs()
			for b.Loop() {
				ref.EncodeOrdinary(corpus)
			}
		})
	}
}

// BenchmarkLongWord counts one 64 KiB word of random lowercase letters (a single piece).
func BenchmarkLongWord(b *testing.B) {
	word := longWord(1 << 16)
	for _, name := range Names() {
		b.Run(name, func(b *testing.B) {
			e := mustGet(b, name)
			e.Count(word)
			b.SetBytes(int64(len(word)))
			b.ReportAllocs()
			for b.Loop() {
				e.Count(word)
			}
		})
	}
}

// BenchmarkLoad parses an embedded vocabulary and builds its hash table (what the first Get
// of an encoding costs).
func BenchmarkLoad(b *testing.B) {
	for _, e := range encodings {
		b.Run(e.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := parseVocab(e.data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
