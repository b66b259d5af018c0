package room

import (
	"sync"

	"github.com/parleyhq/parley/internal/lru"
)

// The page cache keeps full history pages in memory. A full page (parley.HistoryPage.Full:
// it stopped at its message count or its byte cap) never changes: history is append-only,
// seqs are gapless and notes are frozen at post time. So a page cached by one server is right
// whatever other servers on the same database append meanwhile, and it never needs
// invalidating. A page that reached the end of the room may still grow and is never cached.
//
// The cache holds the page's text, hash and message boundaries, and nothing about who read
// it: HistoryPage checks the caller's access before it looks, and counts a cached read for
// the caller's seat exactly as it counts a read from the store (the per-message token counts
// come from the block token cache, or the tokenizer).
//
// It is bounded by bytes, not entries: it evicts the least recently used pages to stay
// within its budget, and a page larger than a quarter of the budget is not kept at all.

// DefaultHistoryCacheBytes is the page cache's budget when Config leaves it unset: a few
// thousand pages of ordinary messages, or eight of the largest pages.
const DefaultHistoryCacheBytes = 32 << 20

// pageOverhead is what an entry costs beyond its text and boundaries, roughly: the map and
// list entries, the key and the hash.
const pageOverhead = 256

type pageKey struct {
	room  string
	after int64
	limit int // normalised: HistoryPageMessages when the reader gave none
}

// cachedPage is one full page: its text and where each message's block ends in it (offs[0]
// is 0; message after+i ends at offs[i]).
type cachedPage struct {
	key  pageKey
	last int64
	text []byte
	offs []int32
	sum  []byte
}

func (p *cachedPage) cost() int64 {
	return int64(len(p.text)) + 4*int64(len(p.offs)) + int64(len(p.key.room)) + pageOverhead
}

// pageCache is a least-recently-used cache of full pages within a byte budget, and the
// claims of the streams filling it. The zero value caches nothing.
type pageCache struct {
	pages   *lru.Cache[pageKey, *cachedPage]
	mu      sync.Mutex
	filling map[pageKey]bool // pages a stream is keeping on its way to the cache
}

func (c *pageCache) init(budget int64) {
	c.pages = lru.New[pageKey, *cachedPage](budget)
	c.filling = map[pageKey]bool{}
}

func (c *pageCache) budget() int64 {
	if c.pages == nil {
		return 0
	}
	return c.pages.Budget()
}

// claim reports whether the caller, about to stream a full page of size bytes, should keep
// it for the cache: when it would be kept, is not cached yet, and no other stream is keeping
// it already (readers that start together each hold a copy only of pages no one else is
// filling). A claim is ended by put or unclaim.
func (c *pageCache) claim(k pageKey, size int64) bool {
	if b := c.budget(); b <= 0 || size+pageOverhead > b/4 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.filling[k] || c.pages.Contains(k) {
		return false
	}
	c.filling[k] = true
	return true
}

func (c *pageCache) unclaim(k pageKey) {
	c.mu.Lock()
	delete(c.filling, k)
	c.mu.Unlock()
}

func (c *pageCache) get(k pageKey) *cachedPage {
	if c.budget() <= 0 {
		return nil
	}
	p, _ := c.pages.Get(k)
	return p
}

// put keeps p (a page already cached meanwhile by another reader has the same bytes and is
// only marked used) and ends its claim.
func (c *pageCache) put(p *cachedPage) {
	if cost := p.cost(); c.budget() > 0 && cost <= c.budget()/4 {
		c.pages.Add(p.key, p, cost)
	}
	c.unclaim(p.key)
}

// size returns the bytes the cache holds by its own count, and its entries.
func (c *pageCache) size() (int64, int) {
	if c.pages == nil {
		return 0, 0
	}
	return c.pages.Size()
}
