package room

import (
	"context"
	"slices"

	"github.com/parleyhq/parley"
)

// StateWholeRoom builds a topic's state record as State did before the store could read one
// topic: from every message and every ask of the room, other topics skipped as they come. It
// is the reference the topic reads are held to.
func (s *Service) StateWholeRoom(ctx context.Context, room, topic string) (*parley.StateRecord, error) {
	asks, err := s.store.Asks(ctx, room, "")
	if err != nil {
		return nil, err
	}
	msgs, err := s.store.Messages(ctx, room, 0, 0)
	if err != nil {
		return nil, err
	}
	rec := buildState(room, topic, slices.Values(msgs), asks)
	if rec.LastSeq == 0 {
		return nil, parley.Errorf(parley.ENOTFOUND, "room %s has no messages on topic %s", room, topic)
	}
	boundState(rec)
	return rec, nil
}

// PageCacheSize reports, for tests, the bytes the page cache counts itself as holding, its
// entries, and its budget.
func (s *Service) PageCacheSize() (used int64, entries int, budget int64) {
	used, entries = s.pages.size()
	return used, entries, s.pages.budget()
}
