// Package accept reads a request's content negotiation headers, once for every edge that
// serves compressed bodies (the HTTP API and the web UI's format lab).
package accept

import (
	"net/http"
	"strconv"
	"strings"
)

// Gzip reports whether the request's Accept-Encoding allows gzip: "gzip", "x-gzip"
// or "*", with a q-value other than 0.
func Gzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for _, part := range strings.Split(v, ",") {
			coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			coding = strings.ToLower(strings.TrimSpace(coding))
			if coding != "gzip" && coding != "x-gzip" && coding != "*" {
				continue
			}
			if q, ok := strings.CutPrefix(strings.ReplaceAll(strings.ToLower(params), " ", ""), "q="); ok {
				if f, err := strconv.ParseFloat(q, 64); err == nil && f == 0 {
					continue
				}
			}
			return true
		}
	}
	return false
}
