package lazyre

import (
	"strings"
	"testing"
)

// TestLazy: an expression is compiled on first use, once, and then behaves as regexp's.
func TestLazy(t *testing.T) {
	r := New(`(?P<word>[a-z]+)-(\d+)`)
	if got := r.FindStringSubmatch("x abc-42 y"); len(got) != 3 || got[1] != "abc" || got[2] != "42" {
		t.Fatalf("FindStringSubmatch = %q", got)
	}
	if r.Regexp() != r.Regexp() {
		t.Fatal("compiled twice")
	}
	if r.SubexpIndex("word") != 1 || r.String() != `(?P<word>[a-z]+)-(\d+)` {
		t.Fatalf("SubexpIndex %d, String %q", r.SubexpIndex("word"), r.String())
	}
}

// TestBadPattern: a pattern that does not compile costs nothing until it is used, and then
// panics as regexp.MustCompile would; MustCompileAll finds it without using it.
func TestBadPattern(t *testing.T) {
	bad := New(`(unclosed`)
	defer func() {
		mu.Lock()
		all = all[:len(all)-1] // this package's other tests call MustCompileAll
		mu.Unlock()
	}()
	for name, f := range map[string]func(){"MustCompileAll": func() { MustCompileAll() }, "use": func() { bad.MatchString("x") }} {
		func() {
			defer func() {
				if v := recover(); v == nil || !strings.Contains(v.(string), "missing closing )") {
					t.Errorf("%s: recovered %v, want a panic naming the error", name, v)
				}
			}()
			f()
		}()
	}
}
