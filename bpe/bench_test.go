package bpe

import (
	"runtime"
	"testing"
	"time"
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
				if _, err := parseVocab(e.data, e.tab, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// classSize is the size of each input of BenchmarkClasses.
const classSize = 4 << 20

// BenchmarkClasses counts 4 MiB of each input class (classes_test.go) and reports beside each
// class's time its ratio to the shared corpus's per-byte time (x-corpus: the limit is 3) and
// the bytes one Count allocates from a cold start per input byte (alloc-B/byte: the limit is
// 16). Each iteration counts the corpus, untimed, just before the class, and the ratio is taken
// between those two measures, so that a change in the load of a shared machine during the run
// moves both sides alike.
func BenchmarkClasses(b *testing.B) {
	corpus := readCorpus(b)
	for _, name := range Names() {
		b.Run(name, func(b *testing.B) {
			e := mustGet(b, name)
			measure := func(b *testing.B, text string) {
				alloc := coldAlloc(func() { e.Count(text) })
				b.SetBytes(int64(len(text)))
				var corpusNs, textNs time.Duration
				for b.Loop() {
					b.StopTimer()
					t0 := time.Now()
					e.Count(corpus)
					t1 := time.Now()
					b.StartTimer()
					e.Count(text)
					textNs += time.Since(t1)
					corpusNs += t1.Sub(t0)
				}
				b.ReportMetric(float64(alloc)/float64(len(text)), "alloc-B/byte")
				b.ReportMetric(float64(textNs)/float64(len(text))/(float64(corpusNs)/float64(len(corpus))), "x-corpus")
			}
			b.Run("corpus", func(b *testing.B) { measure(b, corpus) })
			for _, c := range inputClasses {
				text := c.gen(classSize)
				b.Run(c.name, func(b *testing.B) { measure(b, text) })
			}
		})
	}
}

// coldAlloc returns the bytes f allocates when no scratch is pooled (as in a new process).
func coldAlloc(f func()) uint64 {
	spare.Lock()
	spare.list = nil
	spare.Unlock()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	f()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

// BenchmarkSpaces splits 4 MiB of random white space (the class "whitespace"): spaces alone,
// which reads long runs eight bytes at a time (spacesLong).
func BenchmarkSpaces(b *testing.B) {
	var text string
	for _, c := range inputClasses {
		if c.name == "whitespace" {
			text = c.gen(classSize)
		}
	}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		for i := 0; i < len(text); {
			i = spaces(text, i)
		}
	}
}
