package web_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"

	"github.com/parleyhq/parley/bpe"
	"github.com/parleyhq/parley/web"
)

func gunzipBody(t *testing.T, body string) []byte {
	t.Helper()
	zr, err := gzip.NewReader(strings.NewReader(body))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLabServed checks /lab and its files without a browser: no sign-in needed, a policy
// that lets WebAssembly compile, the wasm and the vocabularies in gzip or plain as the client
// asks (the same bytes either way), and the vocabularies exactly bpe's.
func TestLabServed(t *testing.T) {
	f := newFixture(t, web.Options{})
	b := f.browser(t)

	resp, page := b.get("/lab")
	if resp.StatusCode != 200 || !strings.Contains(page, `src="/lab/lab.js"`) || !strings.Contains(page, `id="lab-trace"`) {
		t.Fatalf("/lab signed out: %d\n%s", resp.StatusCode, page)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "'wasm-unsafe-eval'") || !strings.Contains(csp, "connect-src 'self'") {
		t.Errorf("/lab CSP %q", csp)
	}
	if _, signin := b.get("/signin"); !strings.Contains(signin, `<a href="/lab">Format lab</a>`) {
		t.Error("the header does not link the format lab")
	}

	gz := map[string]string{"Accept-Encoding": "gzip"}
	plain := map[string]string{"Accept-Encoding": "identity"}
	resp, body := b.do("GET", "/lab/lab.wasm", nil, gz)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("Content-Type") != "application/wasm" {
		t.Fatalf("lab.wasm (gzip): %d %v", resp.StatusCode, resp.Header)
	}
	wasm := gunzipBody(t, body)
	if !bytes.HasPrefix(wasm, []byte("\x00asm")) {
		t.Errorf("lab.wasm does not start with the wasm magic: %q", wasm[:min(8, len(wasm))])
	}
	resp, body = b.do("GET", "/lab/lab.wasm", nil, plain)
	if resp.Header.Get("Content-Encoding") != "" || body != string(wasm) {
		t.Errorf("lab.wasm without gzip: encoding %q, %d bytes, want the %d inflated bytes", resp.Header.Get("Content-Encoding"), len(body), len(wasm))
	}

	for _, name := range bpe.Names() {
		want, err := bpe.Data(name)
		if err != nil {
			t.Fatal(err)
		}
		resp, body := b.do("GET", "/lab/vocab/"+name, nil, gz)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" || string(gunzipBody(t, body)) != want {
			t.Errorf("vocab %s (gzip): %d, not bpe's data", name, resp.StatusCode)
		}
		resp, body = b.do("GET", "/lab/vocab/"+name, nil, plain)
		if resp.StatusCode != 200 || body != want {
			t.Errorf("vocab %s (plain): %d, %d bytes, want %d", name, resp.StatusCode, len(body), len(want))
		}
	}
	if resp, _ := b.get("/lab/vocab/p50k_base"); resp.StatusCode != 404 {
		t.Errorf("unknown vocabulary: %d", resp.StatusCode)
	}
	for _, p := range []string{"/lab/lab.js", "/lab/lab.css", "/lab/wasm_exec.js"} {
		if resp, body := b.get(p); resp.StatusCode != 200 || len(body) < 100 {
			t.Errorf("%s: %d, %d bytes", p, resp.StatusCode, len(body))
		}
	}
}
