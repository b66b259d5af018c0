// Package lazyre holds regular expressions that are compiled on first use instead of when
// the program starts. parley is one binary: a command such as 'parley tokens' or 'parley
// post' would otherwise compile every pattern of the linter, the secret scanner and the AACP
// checks (about fifty) before it does anything, some 3 ms of its start.
//
// A pattern that does not compile panics on first use, as regexp.MustCompile would at start;
// MustCompileAll compiles every pattern made so far, for a test.
package lazyre

import (
	"regexp"
	"sync"
)

// Regexp is a regular expression compiled on first use. Its methods are those of
// regexp.Regexp that parley calls.
type Regexp struct {
	expr string
	get  func() *regexp.Regexp
}

var (
	mu  sync.Mutex
	all []*Regexp
)

// New returns the regular expression expr, to be compiled on first use.
func New(expr string) *Regexp {
	r := &Regexp{expr: expr, get: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })}
	mu.Lock()
	all = append(all, r)
	mu.Unlock()
	return r
}

// MustCompileAll compiles every expression made by New so far, and panics as
// regexp.MustCompile does (naming the expression) on the first that does not compile. It
// returns how many there are.
func MustCompileAll() int {
	mu.Lock()
	list := append([]*Regexp(nil), all...)
	mu.Unlock()
	for _, r := range list {
		r.get()
	}
	return len(list)
}

// Regexp returns the compiled expression.
func (r *Regexp) Regexp() *regexp.Regexp { return r.get() }

// String returns the source text of the expression.
func (r *Regexp) String() string { return r.expr }

// The methods below are regexp.Regexp's, on the expression compiled on first use.

func (r *Regexp) MatchString(s string) bool      { return r.get().MatchString(s) }
func (r *Regexp) FindString(s string) string     { return r.get().FindString(s) }
func (r *Regexp) FindStringIndex(s string) []int { return r.get().FindStringIndex(s) }
func (r *Regexp) FindStringSubmatch(s string) []string {
	return r.get().FindStringSubmatch(s)
}
func (r *Regexp) FindStringSubmatchIndex(s string) []int {
	return r.get().FindStringSubmatchIndex(s)
}
func (r *Regexp) FindAllString(s string, n int) []string { return r.get().FindAllString(s, n) }
func (r *Regexp) FindAllStringIndex(s string, n int) [][]int {
	return r.get().FindAllStringIndex(s, n)
}
func (r *Regexp) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return r.get().FindAllStringSubmatchIndex(s, n)
}
func (r *Regexp) ReplaceAllStringFunc(src string, repl func(string) string) string {
	return r.get().ReplaceAllStringFunc(src, repl)
}
func (r *Regexp) SubexpIndex(name string) int    { return r.get().SubexpIndex(name) }
func (r *Regexp) Split(s string, n int) []string { return r.get().Split(s, n) }
