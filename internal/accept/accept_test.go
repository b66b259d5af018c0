package accept

import (
	"net/http"
	"testing"
)

func TestGzip(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   bool
	}{
		{"", false},
		{"identity", false},
		{"gzip", true},
		{"GZIP", true},
		{"deflate, br, gzip;q=0.5", true},
		{"x-gzip", true},
		{"*", true},
		{"gzip;q=0", false},
		{"gzip; q=0.0", false},
		{"gzip;q=0.001", true},
		{"br, *;q=0", false},
		{"gzipped", false},
	} {
		r, _ := http.NewRequest("GET", "/", nil)
		if tc.header != "" {
			r.Header.Set("Accept-Encoding", tc.header)
		}
		if got := Gzip(r); got != tc.want {
			t.Errorf("Accept-Encoding %q: %v, want %v", tc.header, got, tc.want)
		}
	}
}
