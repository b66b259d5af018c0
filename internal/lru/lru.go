// Package lru is a least-recently-used cache within a budget of bytes, safe for concurrent
// use: the history page cache of the room service and the HTTP edge's cache of gzipped pages
// are both one.
package lru

import (
	"container/list"
	"sync"
)

// Cache maps keys to values, each with the cost it was added at, and drops the least recently
// used entries while the costs add up to more than its budget. A budget of 0 or less keeps
// nothing.
type Cache[K comparable, V any] struct {
	mu     sync.Mutex
	budget int64
	used   int64
	m      map[K]*list.Element // of *entry[K, V]
	order  list.List           // front: most recently used
}

type entry[K comparable, V any] struct {
	key  K
	val  V
	cost int64
}

// New returns an empty cache with the given budget.
func New[K comparable, V any](budget int64) *Cache[K, V] {
	return &Cache[K, V]{budget: max(budget, 0), m: map[K]*list.Element{}}
}

// Budget returns the cache's budget in bytes.
func (c *Cache[K, V]) Budget() int64 { return c.budget }

// Get returns the value of k and marks it used, or false.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*entry[K, V]).val, true
}

// Contains reports whether k is kept, without marking it used.
func (c *Cache[K, V]) Contains(k K) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.m[k]
	return ok
}

// Add keeps v under k at the given cost, dropping the least recently used entries while the
// cache is over its budget. A key already kept is marked used and keeps its value (the
// callers' values for one key are the same bytes). A cost over the budget keeps nothing.
func (c *Cache[K, V]) Add(k K, v V, cost int64) {
	if cost > c.budget {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[k]; ok {
		c.order.MoveToFront(e)
		return
	}
	c.m[k] = c.order.PushFront(&entry[K, V]{key: k, val: v, cost: cost})
	c.used += cost
	for c.used > c.budget {
		old := c.order.Remove(c.order.Back()).(*entry[K, V])
		delete(c.m, old.key)
		c.used -= old.cost
	}
}

// Size returns the bytes the cache holds by the costs it was given, and its entries.
func (c *Cache[K, V]) Size() (int64, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used, len(c.m)
}
