package redact

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// hexRun is isHexRun's expression, as first written.
var hexRun = regexp.MustCompile(`^[0-9a-fA-F]{32,}$`)

// refHasToken and refPath are HasToken and Path as first written: the regular expression on
// every string, and every path split and joined. The faster versions must agree with them.
func refHasToken(s string) bool {
	for _, m := range tokenShape.FindAllString(s, -1) {
		if strings.HasPrefix(m, "pk_") || strings.HasPrefix(m, "admin-") || randomLooking(m) {
			return true
		}
	}
	return false
}

func refPath(p string) string {
	if !refHasToken(p) && !strings.ContainsAny(p, "0123456789") {
		return p
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		d, err := url.PathUnescape(s)
		if err != nil {
			d = s
		}
		if refHasToken(d) || hexRun.MatchString(d) || refHasToken(s) || hexRun.MatchString(s) {
			segs[i] = Mark
		}
	}
	return strings.Join(segs, "/")
}

var pathSeeds = []string{"/v1/rooms/bench-3f2a9c1b-0/messages", "/v1/rooms/" + seatTok + "/history", "/rooms/x" + seatTok,
	"/v1/rooms/h/state/" + adminTok, "/" + hexTok, "/v1/rooms/h/seats/builder-2/rotate", "", "/", "//", "%zz/" + hexTok,
	"/a/" + strings.Repeat("ab12", 8), "/a/" + strings.Repeat("aB1", 11), "/pk_" + strings.Repeat("x", 16), "/x%2F" + seatTok}

func FuzzPath(f *testing.F) {
	for _, s := range pathSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if got, want := HasToken(p), refHasToken(p); got != want {
			t.Errorf("HasToken(%q) = %v, want %v", p, got, want)
		}
		if got, want := Path(p), refPath(p); got != want {
			t.Errorf("Path(%q) = %q, want %q", p, got, want)
		}
		if got, want := isHexRun(p), hexRun.MatchString(p); got != want {
			t.Errorf("isHexRun(%q) = %v, the expression says %v", p, got, want)
		}
	})
}

func TestPathAgrees(t *testing.T) {
	for _, p := range append(pathSeeds, hexTok, strings.Repeat("aF0", 11), strings.Repeat("a", 31), strings.Repeat("f", 32)+"g", strings.Repeat("F", 32)+"\n") {
		if got, want := isHexRun(p), hexRun.MatchString(p); got != want {
			t.Errorf("isHexRun(%q) = %v, the expression says %v", p, got, want)
		}
	}
	for _, p := range pathSeeds {
		if got, want := Path(p), refPath(p); got != want {
			t.Errorf("Path(%q) = %q, want %q", p, got, want)
		}
	}
	// The common path is returned as it is, without a copy.
	p := "/v1/rooms/bench-3f2a9c1b-0/messages"
	if n := testing.AllocsPerRun(100, func() { Path(p) }); n != 0 {
		t.Errorf("Path(%q) allocates %.0f times, want 0", p, n)
	}
}

// BenchmarkPath redacts the path of a post, as the request log does for every request.
func BenchmarkPath(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Path("/v1/rooms/bench-3f2a9c1b-0/messages")
	}
}
