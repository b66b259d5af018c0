package postgres

import (
	"context"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/fulltext"
	"github.com/parleyhq/parley/internal/sqlstore"
)

// querySearch finds the room's matches through the GIN index on messages.words (migration
// 0004) and ranks them by ts_rank, best highest.
const querySearch = `SELECT ` + sqlstore.MessageColumns + `
	FROM messages, to_tsquery('simple', $1) q
	WHERE room = $2 AND words @@ q
	ORDER BY ts_rank(words, q) DESC, seq DESC LIMIT $3`

// Search returns up to limit of the room's messages holding any of words, best first.
func (s *Store) Search(ctx context.Context, room string, words []string, limit int) ([]*parley.Message, error) {
	q := fulltext.TSQuery(words)
	if q == "" || limit <= 0 {
		return nil, nil
	}
	return s.RunSearch(ctx, querySearch, q, room, limit)
}
