package forwarded

import (
	"crypto/tls"
	"net/http/httptest"
	"testing"
)

func TestApply(t *testing.T) {
	tr, err := Parse([]string{"127.0.0.1", "10.0.0.0/8,::1/128"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, peer, xff, proto string
		remote, proxy          string
		https                  bool
	}{
		{"direct client, headers ignored", "203.0.113.9:5000", "198.51.100.1", "https", "203.0.113.9:5000", "", false},
		{"trusted proxy", "127.0.0.1:4000", "198.51.100.1", "https", "198.51.100.1", "127.0.0.1:4000", true},
		{"spoofed left hop skipped", "127.0.0.1:4000", "6.6.6.6, 198.51.100.1", "http", "198.51.100.1", "127.0.0.1:4000", false},
		{"chain of trusted proxies", "127.0.0.1:4000", "198.51.100.1, 10.1.2.3", "https", "198.51.100.1", "127.0.0.1:4000", true},
		{"only proxies: the leftmost", "[::1]:4000", "10.0.0.1,10.0.0.2", "", "10.0.0.1", "[::1]:4000", false},
		{"garbled hop: stop there", "127.0.0.1:4000", "198.51.100.1, junk", "", "127.0.0.1:4000", "127.0.0.1:4000", false},
		{"hop with a port", "127.0.0.1:4000", "198.51.100.7:1234", "HTTPS", "198.51.100.7", "127.0.0.1:4000", true},
		{"no header from proxy", "127.0.0.1:4000", "", "", "127.0.0.1:4000", "127.0.0.1:4000", false},
		{"proto list: the nearest proxy's", "127.0.0.1:4000", "", "https, http", "127.0.0.1:4000", "127.0.0.1:4000", false},
		{"v4-mapped peer", "[::ffff:10.9.9.9]:1", "198.51.100.1", "https", "198.51.100.1", "[::ffff:10.9.9.9]:1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tc.peer
			if tc.xff != "" {
				r.Header.Set("X-Forwarded-For", tc.xff)
			}
			if tc.proto != "" {
				r.Header.Set("X-Forwarded-Proto", tc.proto)
			}
			got := tr.Apply(r)
			if got.RemoteAddr != tc.remote || Proxy(got) != tc.proxy || HTTPS(got) != tc.https {
				t.Errorf("remote %q proxy %q https %v; want %q %q %v", got.RemoteAddr, Proxy(got), HTTPS(got), tc.remote, tc.proxy, tc.https)
			}
			if tc.proxy == "" && (got.Header.Get("X-Forwarded-For") != "" || got.Header.Get("X-Forwarded-Proto") != "") {
				t.Error("an untrusted client's X-Forwarded headers were left in place")
			}
		})
	}
	// Nobody trusted: the headers count for nothing; TLS itself still does.
	var none *Trusted
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "127.0.0.1:1"
	r.Header.Set("X-Forwarded-Proto", "https")
	if got := none.Apply(r); HTTPS(got) || Proxy(got) != "" {
		t.Error("headers believed with no trusted proxy")
	}
	r.TLS = &tls.ConnectionState{}
	if !HTTPS(r) {
		t.Error("a TLS connection is not HTTPS")
	}
}

func TestParseRefuses(t *testing.T) {
	for _, v := range []string{"10.0.0.0/33", "example.com", "10.0.0"} {
		if _, err := Parse([]string{v}); err == nil {
			t.Errorf("Parse(%q) accepted", v)
		}
	}
}

// FuzzApply: whatever X-Forwarded-For holds, the address Apply leaves is the peer's or a
// parsed IP, and never one from a trusted network unless every hop was trusted.
func FuzzApply(f *testing.F) {
	tr, _ := Parse([]string{"127.0.0.1", "10.0.0.0/8"})
	for _, s := range []string{"198.51.100.1", "1.2.3.4, 10.0.0.1", "[::1]:80, x", ",,,", "10.0.0.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, xff string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = "127.0.0.1:4000"
		r.Header.Set("X-Forwarded-For", xff)
		got := tr.Apply(r)
		if got.RemoteAddr == "127.0.0.1:4000" {
			return
		}
		if _, ok := parseAddr(got.RemoteAddr); !ok {
			t.Fatalf("RemoteAddr %q from %q is not an address", got.RemoteAddr, xff)
		}
	})
}
