package room

import (
	"bytes"
	"testing"
)

func testPage(room string, after int64, size int) *cachedPage {
	return &cachedPage{key: pageKey{room, after, 10}, last: after + 10, text: bytes.Repeat([]byte("x"), size), offs: make([]int32, 11)}
}

// TestPageCacheLRU: the least recently used page goes first, and a page is kept by one
// stream at a time.
func TestPageCacheLRU(t *testing.T) {
	var c pageCache
	c.init(4 * 1000)
	a, b := testPage("r", 0, 500), testPage("r", 10, 500)
	if !c.claim(a.key, 500) || c.claim(a.key, 500) {
		t.Fatal("a page is claimed by one stream at a time")
	}
	c.put(a)
	if c.claim(a.key, 500) {
		t.Fatal("a cached page was claimed again")
	}
	if !c.claim(b.key, 500) {
		t.Fatal("claim b")
	}
	c.unclaim(b.key)
	if !c.claim(b.key, 500) {
		t.Fatal("an unclaimed page cannot be claimed again")
	}
	c.put(b)
	c.put(testPage("r", 20, 500))
	if c.get(a.key) == nil { // a is now the most recently used
		t.Fatal("a was evicted early")
	}
	c.put(testPage("r", 30, 500))
	c.put(testPage("r", 40, 500)) // over the budget: b, the least recently used, goes
	if c.get(b.key) != nil || c.get(a.key) == nil {
		used, _ := c.size()
		t.Fatalf("evicted the wrong page: used %d of %d", used, c.budget())
	}
	if used, _ := c.size(); used > c.budget() {
		t.Fatalf("used %d of %d", used, c.budget())
	}
	if c.claim(pageKey{"r", 50, 10}, 1001) {
		t.Fatal("a page over a quarter of the budget was claimed")
	}
	var off pageCache
	off.init(0)
	if off.claim(a.key, 1) {
		t.Fatal("a cache without a budget claimed a page")
	}
	off.put(a)
	if off.get(a.key) != nil {
		t.Fatal("a cache without a budget kept a page")
	}
}
