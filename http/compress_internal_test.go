package http

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"io"
	"strings"
	"testing"

	"github.com/parleyhq/parley"
)

func TestGzipETag(t *testing.T) {
	for in, want := range map[string]string{
		`"abc"`:      `"abc-gzip"`,
		`W/"abc"`:    `W/"abc-gzip"`,
		`"abc-gzip"`: `"abc-gzip"`,
		`unquoted`:   `unquoted`,
	} {
		if got := gzipETag(in); got != want {
			t.Errorf("gzipETag(%s) = %s, want %s", in, got, want)
		}
	}
}

func testPage(text string, streams *int) *parley.HistoryPage {
	sum := sha256.Sum256([]byte(text))
	return &parley.HistoryPage{Size: int64(len(text)), Sum: sum[:], Full: true, Stream: func(w io.Writer) error {
		*streams++
		_, err := io.WriteString(w, text)
		return err
	}}
}

// TestGzipPages: a full page is compressed once, decompresses to its bytes, and the cache
// keeps within its budget, dropping the least recently used page first.
func TestGzipPages(t *testing.T) {
	c := newGzipPages(1 << 20)
	var streams int
	text := strings.Repeat("#1 lead 20261130T090000Z\nv1 note x to all n=1\noutcome fine\n\n", 200)
	p := testPage(text, &streams)
	a, err := c.get(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.get(p)
	if err != nil || !bytes.Equal(a, b) || streams != 1 {
		t.Fatalf("second get: %v, same %v, %d streams", err, bytes.Equal(a, b), streams)
	}
	zr, err := gzip.NewReader(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := io.ReadAll(zr); string(got) != text {
		t.Fatal("the kept gzip decompresses to other bytes")
	}

	// Pages of random-ish text that do not compress much: the budget holds a few.
	small := newGzipPages(12 << 10)
	var pages []*parley.HistoryPage
	var n [20]int
	for i := range 20 {
		var sb strings.Builder
		for j := range 600 {
			sum := sha256.Sum256([]byte{byte(i), byte(j), byte(j >> 8)})
			sb.WriteString(string(rune('a' + sum[0]%26)))
			sb.WriteString(string(rune('a' + sum[1]%26)))
			sb.WriteString(string(rune('a' + sum[2]%26)))
		}
		pages = append(pages, testPage(sb.String(), &n[i]))
		if _, err := small.get(pages[i]); err != nil {
			t.Fatal(err)
		}
		if used, _ := small.pages.Size(); used > small.pages.Budget() {
			t.Fatalf("%d bytes kept over a budget of %d", used, small.pages.Budget())
		}
	}
	small.get(pages[19]) // the most recent is kept
	small.get(pages[0])  // the first was dropped: compressed again
	if n[19] != 1 || n[0] != 2 {
		t.Errorf("streams: most recent %d (want 1), oldest %d (want 2)", n[19], n[0])
	}
}
