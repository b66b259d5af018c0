package room

import (
	"context"
	"sync"
	"time"

	"github.com/parleyhq/parley"
)

// statFlushEvery is how long counters wait in memory before they are written.
const statFlushEvery = time.Second

// statBuf holds counter increments in memory and writes them in batches. Counters are
// bookkeeping: writing each one in its own durable transaction would cost a read path an
// fsync per counter. They are flushed at most statFlushEvery after they were added (on the
// next request or scheduler wake), before Stats answers, and when the scheduler stops; a crash
// loses at most the last second of counts, never a message.
type statBuf struct {
	mu      sync.Mutex
	pending map[statKey]int64
	last    time.Time
}

type statKey struct{ room, seat, key string }

func (s *Service) addStat(ctx context.Context, room, seat, key string, delta int64) {
	if delta == 0 {
		return
	}
	now := s.now()
	s.stats.mu.Lock()
	if s.stats.pending == nil {
		s.stats.pending = map[statKey]int64{}
		s.stats.last = now
	}
	s.stats.pending[statKey{room, seat, key}] += delta
	due := now.Sub(s.stats.last) >= statFlushEvery
	s.stats.mu.Unlock()
	if due {
		s.flushStats(ctx)
	}
}

// flushStats writes every pending counter. A counter that fails to write is logged and
// dropped: retrying could double-count if the write did land.
func (s *Service) flushStats(ctx context.Context) {
	s.stats.mu.Lock()
	pending := s.stats.pending
	s.stats.pending = nil
	s.stats.last = s.now()
	s.stats.mu.Unlock()
	if len(pending) == 0 {
		return
	}
	if sa, ok := s.store.(parley.StatsAdder); ok && len(pending) > 1 {
		// One statement for them all; when it fails (a room deleted meanwhile), one each,
		// so that every other counter still lands and the failing one is logged.
		deltas := make([]parley.StatDelta, 0, len(pending))
		for k, v := range pending {
			deltas = append(deltas, parley.StatDelta{Room: k.room, Seat: k.seat, Key: k.key, Delta: v})
		}
		if err := sa.AddStats(ctx, deltas); err == nil {
			return
		}
	}
	for k, v := range pending {
		if err := s.store.AddStat(ctx, k.room, k.seat, k.key, v); err != nil {
			s.log.WarnContext(ctx, "room: stat", "room", k.room, "seat", k.seat, "key", k.key, "delta", v, "err", err)
		}
	}
}
