package web

import (
	"bytes"
	"compress/gzip"
	"embed"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/parleyhq/parley/bpe"
	"github.com/parleyhq/parley/internal/accept"
)

// The format lab (/lab): a page that runs parley's Go code in the browser (lab/wasm, built
// into web/lab by go generate; see web/internal/labwasm). It needs no sign-in and sends
// nothing: the page fetches its own files and the two tokenizer vocabularies, which the
// server hands out from the copy package bpe embeds rather than the wasm carrying another.

//go:generate go run ./internal/labwasm

//go:embed lab/lab.js lab/lab.css lab/wasm_exec.js lab/lab.wasm.gz
var labFS embed.FS

// labCSP is the page's Content-Security-Policy: the UI's, plus 'wasm-unsafe-eval', which
// compiling WebAssembly needs, and no form target (the lab posts nothing).
const labCSP = "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

func (h *Handler) routeLab(m *http.ServeMux) {
	m.HandleFunc("GET /lab", h.labPage)
	m.Handle("GET /lab/lab.js", labAsset("lab/lab.js", "text/javascript; charset=utf-8"))
	m.Handle("GET /lab/lab.css", labAsset("lab/lab.css", "text/css; charset=utf-8"))
	m.Handle("GET /lab/wasm_exec.js", labAsset("lab/wasm_exec.js", "text/javascript; charset=utf-8"))
	m.HandleFunc("GET /lab/lab.wasm", serveLabWasm)
	m.HandleFunc("GET /lab/vocab/{encoding}", serveVocab)
}

func (h *Handler) labPage(w http.ResponseWriter, r *http.Request) {
	u, _ := h.current(r)
	w.Header().Set("Content-Security-Policy", labCSP)
	h.render(w, r, http.StatusOK, "lab", &view{Title: "Format lab", User: u, Tab: "lab"})
}

func labAsset(name, ctype string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := labFS.ReadFile(name)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", ctype)
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Write(b)
	})
}

// serveGzipped sends gz, the gzip of a body of type ctype: as it is to a client that takes
// gzip, inflated (once, then kept) for one that does not.
func serveGzipped(w http.ResponseWriter, r *http.Request, gz []byte, ctype string, plain func() ([]byte, error)) {
	hd := w.Header()
	hd.Set("Content-Type", ctype)
	hd.Set("Cache-Control", "public, max-age=300")
	hd.Set("Vary", "Accept-Encoding")
	if accept.Gzip(r) {
		hd.Set("Content-Encoding", "gzip")
		w.Write(gz)
		return
	}
	b, err := plain()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Write(b)
}

var labWasm struct {
	once  sync.Once
	plain []byte
	err   error
}

func serveLabWasm(w http.ResponseWriter, r *http.Request) {
	gz, err := labFS.ReadFile("lab/lab.wasm.gz")
	if err != nil {
		http.NotFound(w, r)
		return
	}
	serveGzipped(w, r, gz, "application/wasm", func() ([]byte, error) {
		labWasm.once.Do(func() { labWasm.plain, labWasm.err = gunzip(gz) })
		return labWasm.plain, labWasm.err
	})
}

// gzipOnce is a body gzipped on its first request and kept.
type gzipOnce struct {
	once sync.Once
	gz   []byte
	err  error
}

// vocabGzip holds each vocabulary gzipped (1.6 MB of o200k_base takes a moment: once).
var vocabGzip = func() map[string]*gzipOnce {
	m := map[string]*gzipOnce{}
	for _, n := range bpe.Names() {
		m[n] = &gzipOnce{}
	}
	return m
}()

func serveVocab(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("encoding")
	v, ok := vocabGzip[name]
	if !ok {
		http.Error(w, "unknown encoding "+name+" (known: "+strings.Join(bpe.Names(), ", ")+")", http.StatusNotFound)
		return
	}
	data, err := bpe.Data(name)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	v.once.Do(func() {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.DefaultCompression)
		io.WriteString(zw, data)
		v.err = zw.Close()
		v.gz = b.Bytes()
	})
	if v.err != nil {
		http.Error(w, v.err.Error(), http.StatusInternalServerError)
		return
	}
	serveGzipped(w, r, v.gz, "application/octet-stream", func() ([]byte, error) { return []byte(data), nil })
}

func gunzip(gz []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}
