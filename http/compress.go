package http

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/accept"
	"github.com/parleyhq/parley/internal/lru"
)

// Compression happens here, at the edge: the service (and its page cache) keeps serving the
// uncompressed bytes, and a response is gzipped on its way out when the client sent
// Accept-Encoding: gzip. The decompressed bytes are the same for every reader, compressed or
// not.
//
// A gzipped response is another representation of the resource, so it has its own ETag: the
// identity ETag with "-gzip" inside the quotes ("abc…" becomes "abc…-gzip"). If-None-Match is
// compared with the tag of the representation the request would get, so each one revalidates
// to 304 with its own tag. Every compressible route says Vary: Accept-Encoding, compressed or
// not, so that a cache keeps the two apart.

// minCompressSize is the smallest body worth compressing: below it the gzip framing (18
// bytes) and the CPU cost are not paid back.
const minCompressSize = 1024

// gzipETagSuffix marks the ETag of the gzip representation.
const gzipETagSuffix = "-gzip"

// gzipLevel trades CPU for size. On the history of 1,000 messages of a real agent transcript
// (tau-airline, 383 KB) level 5 gives 5.8× where level 1 gives 4.4× and level 6 5.9×; it
// compresses at about half level 1's speed and 1.6× level 6's (some 46 MB/s on one core).
// Full history pages, the bulk of what is read, are compressed once and kept (gzipPages).
const gzipLevel = 5

var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzipLevel)
	return w
}}

// gzipETag returns the ETag of the gzip representation of the resource whose identity ETag
// is etag (strong or weak).
func gzipETag(etag string) string {
	if !strings.HasSuffix(etag, `"`) || strings.HasSuffix(etag, gzipETagSuffix+`"`) {
		return etag
	}
	return strings.TrimSuffix(etag, `"`) + gzipETagSuffix + `"`
}

// representationETag returns the ETag w will send for a 200 response whose identity ETag is
// etag and whose uncompressed body is size bytes long (-1: unknown): the gzip tag when w
// compresses it. A handler compares If-None-Match with this tag.
func representationETag(w http.ResponseWriter, etag string, size int64) string {
	if gw, ok := w.(*gzipWriter); ok && gw.wouldCompress(size) {
		return gzipETag(etag)
	}
	return etag
}

// compressed wraps a handler whose 200 responses may be gzipped: it adds Vary:
// Accept-Encoding, and when the client accepts gzip it hands the handler a writer that
// compresses a 200 response whose body is not known to be small. Error responses and 304s go
// out as they are.
func (s *Server) compressed(h apiHandler) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, c *parley.Caller) error {
		w.Header().Add("Vary", "Accept-Encoding")
		if !accept.Gzip(r) {
			return h(w, r, c)
		}
		gw := &gzipWriter{ResponseWriter: w, head: r.Method == http.MethodHead}
		err := h(gw, r, c)
		if err == nil || gw.wroteHeader {
			gw.finish()
		}
		return err
	}
}

// compressedHandler is compressed for a mounted handler (the web UI): its pages, assets and
// live stream are gzipped on the same terms, when their Content-Type is text. A request for a
// byte range is served as it is: ranges count bytes of the uncompressed file.
func compressedHandler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Range") != "" {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Add("Vary", "Accept-Encoding")
		if !accept.Gzip(r) {
			h.ServeHTTP(w, r)
			return
		}
		gw := &gzipWriter{ResponseWriter: w, head: r.Method == http.MethodHead, textOnly: true}
		h.ServeHTTP(gw, r)
		gw.finish()
	})
}

// compressibleType reports whether a Content-Type is text that gzip shrinks: text/*, JSON,
// JavaScript, SVG. Images and archives are compressed already.
func compressibleType(ct string) bool {
	mt, _, _ := strings.Cut(strings.ToLower(ct), ";")
	mt = strings.TrimSpace(mt)
	return strings.HasPrefix(mt, "text/") || mt == "application/json" || mt == "application/javascript" ||
		mt == "image/svg+xml" || strings.HasSuffix(mt, "+json")
}

// gzipWriter compresses a response once its header says it should be: status 200, no
// Content-Encoding yet, and no Content-Length under minCompressSize. The Content-Length of a
// compressed body is not known in advance, so it is dropped (the body goes out chunked, or
// in HTTP/2 frames). Flush flushes the compressor before the connection, so that each event
// of a stream reaches the client when it is sent.
type gzipWriter struct {
	http.ResponseWriter
	head        bool // a HEAD request: the headers of the GET, no body
	textOnly    bool // compress only a compressibleType (a mounted handler's responses)
	wroteHeader bool
	gz          *gzip.Writer // nil until the response is known to be compressed
}

func (g *gzipWriter) wouldCompress(size int64) bool {
	return size < 0 || size >= minCompressSize
}

func (g *gzipWriter) WriteHeader(code int) {
	if g.wroteHeader {
		g.ResponseWriter.WriteHeader(code)
		return
	}
	g.wroteHeader = true
	h := g.Header()
	if code == http.StatusOK && h.Get("Content-Encoding") == "" && (!g.textOnly || compressibleType(h.Get("Content-Type"))) {
		size := int64(-1)
		if cl := h.Get("Content-Length"); cl != "" {
			if n, err := strconv.ParseInt(cl, 10, 64); err == nil {
				size = n
			}
		}
		if g.wouldCompress(size) {
			h.Del("Content-Length")
			h.Del("Accept-Ranges") // ranges would count compressed bytes
			h.Set("Content-Encoding", "gzip")
			if et := h.Get("ETag"); et != "" {
				h.Set("ETag", gzipETag(et))
			}
			if !g.head {
				g.gz = gzipWriters.Get().(*gzip.Writer)
				g.gz.Reset(g.ResponseWriter)
			}
		}
	}
	g.ResponseWriter.WriteHeader(code)
}

func (g *gzipWriter) Write(b []byte) (int, error) {
	if !g.wroteHeader {
		g.WriteHeader(http.StatusOK)
	}
	if g.gz == nil {
		return g.ResponseWriter.Write(b)
	}
	return g.gz.Write(b)
}

// FlushError flushes the compressor, then the connection; http.ResponseController calls it.
func (g *gzipWriter) FlushError() error {
	if !g.wroteHeader {
		g.WriteHeader(http.StatusOK)
	}
	if g.gz != nil {
		if err := g.gz.Flush(); err != nil {
			return err
		}
	}
	return http.NewResponseController(g.ResponseWriter).Flush()
}

func (g *gzipWriter) Flush() { _ = g.FlushError() }

// Unwrap lets http.ResponseController reach the connection (deadlines).
func (g *gzipWriter) Unwrap() http.ResponseWriter { return g.ResponseWriter }

// finish ends the gzip stream and returns the compressor to the pool.
func (g *gzipWriter) finish() {
	if g.gz == nil {
		return
	}
	_ = g.gz.Close()
	g.gz.Reset(nil)
	gzipWriters.Put(g.gz)
	g.gz = nil
}

// gzipPagesBudget bounds the compressed bytes gzipPages keeps: at the ratios above, the
// gzip of some 100 to 250 MiB of full pages.
const gzipPagesBudget = 32 << 20

// gzipPages keeps the gzip of full history pages, which never change, so that each is
// compressed once, least recently used first out. It is keyed by the page's SHA-256: the
// same bytes give the same gzip whoever reads them, and a caller only ever reaches an entry
// through a page the service let it read.
type gzipPages struct {
	pages *lru.Cache[[32]byte, []byte]
}

func newGzipPages(budget int) *gzipPages {
	return &gzipPages{pages: lru.New[[32]byte, []byte](int64(budget))}
}

// get returns the gzip of page, compressing it when it is not kept yet.
func (c *gzipPages) get(page *parley.HistoryPage) ([]byte, error) {
	var key [32]byte
	if len(page.Sum) != len(key) {
		return nil, fmt.Errorf("history page with a %d-byte sum", len(page.Sum))
	}
	copy(key[:], page.Sum)
	if gz, ok := c.pages.Get(key); ok {
		return gz, nil
	}

	// Compressed outside any lock: two readers missing at once both compress, and the
	// second's copy replaces nothing.
	var buf bytes.Buffer
	zw := gzipWriters.Get().(*gzip.Writer)
	zw.Reset(&buf)
	err := page.Stream(zw)
	if err == nil {
		err = zw.Close()
	}
	zw.Reset(nil)
	gzipWriters.Put(zw)
	if err != nil {
		return nil, err
	}
	gz := bytes.Clone(buf.Bytes())
	if int64(len(gz)) <= c.pages.Budget()/8 {
		c.pages.Add(key, gz, int64(len(gz)))
	}
	return gz, nil
}
