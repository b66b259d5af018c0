package room

import (
	"context"

	"github.com/parleyhq/parley"
)

// CachedPriceRate is what a provider charges for cached input tokens relative to fresh ones
// (about a tenth at the major providers).
const CachedPriceRate = 0.1

// Stats returns what the room has cost and saved.
//
// The prompt-cache projection: an agent re-sends its context on every turn, and a provider
// cache serves an unchanged prefix at about a tenth of the price. The server sees reads, not
// prompts, so it counts what it can prove: when a seat reads history starting from the same
// seq as its previous read (typically after=0, or the seq it joined at), the bytes up to where
// that previous read ended are identical (history is byte-stable), so those tokens are an
// unchanged prefix that a cache would serve. They are counted in "cached_read_tokens"; every
// history token served is counted in "read_tokens". Reads that start elsewhere count as
// uncached, so the projection errs low. Read marks live in memory and start afresh on restart.
func (s *Service) Stats(ctx context.Context, c *parley.Caller, room string) (*parley.RoomStats, error) {
	if err := canSee(c, room); err != nil {
		return nil, err
	}
	if _, err := s.room(ctx, room); err != nil {
		return nil, err
	}
	s.flushStats(ctx)
	counters, err := s.store.Stats(ctx, room)
	if err != nil {
		return nil, s.internal(ctx, "stats", err)
	}
	last, err := s.store.LastSeq(ctx, room)
	if err != nil {
		return nil, s.internal(ctx, "stats", err)
	}
	st := &parley.RoomStats{
		Room: room, Messages: last, Counters: counters,
		TokensPosted: map[string]int64{}, DedupTokens: map[string]int64{}, ReadTokens: map[string]int64{},
	}
	if st.Counters == nil {
		st.Counters = map[string]map[string]int64{}
	}
	var read, cached int64
	for seat, kv := range counters {
		if v := kv["tokens_posted"]; v != 0 {
			st.TokensPosted[seat] = v
		}
		if v := kv["dedup_tokens"]; v != 0 {
			st.DedupTokens[seat] = v
		}
		if v := kv["read_tokens"]; v != 0 {
			st.ReadTokens[seat] = v
		}
		read += kv["read_tokens"]
		cached += kv["cached_read_tokens"]
	}
	st.CacheProjection = ProjectCache(read, cached, CachedPriceRate)
	return st, nil
}

// ProjectCache prices read tokens of which cached could come from a provider's prompt cache,
// the cached ones at rate (CachedPriceRate on the Stats tab), in token-equivalents. The
// Stats tab's projection and `parley bench cache`'s "projected" column are both this.
func ProjectCache(read, cached int64, rate float64) parley.CacheProjection {
	cached = min(max(cached, 0), read)
	cachedCost := float64(read-cached) + rate*float64(cached)
	return parley.CacheProjection{
		ReadTokens: read, CachedTokens: cached,
		UncachedCost: float64(read), CachedCost: cachedCost, Saving: float64(read) - cachedCost,
		CachedPriceRate: rate,
	}
}

// CacheableRead is the Stats model for one history read, as startRead and readCount apply
// it: a read that starts where the same seat's previous read started (prevSeen) begins with
// the same bytes up to where that read ended, so the blocks with seq <= prevLast are cached.
func CacheableRead(prevSeen bool, prevAfter, prevLast, after, seq int64) bool {
	return prevSeen && prevAfter == after && seq <= prevLast
}
