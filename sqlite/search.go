package sqlite

import (
	"context"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/fulltext"
	"github.com/parleyhq/parley/internal/sqlstore"
)

// querySearch ranks the room's matches in the FTS5 index (migration 0003) by bm25, whose
// scores are negative, best lowest, and reads the best $3 from messages by (room, seq).
var querySearch = `SELECT ` + sqlstore.Qualified("m", sqlstore.MessageColumns) + `
	FROM (SELECT room, seq, bm25(message_words) AS score FROM message_words
		WHERE message_words MATCH $1 AND room = $2
		ORDER BY score, seq DESC LIMIT $3) w
	JOIN messages m ON m.room = w.room AND m.seq = w.seq
	ORDER BY w.score, w.seq DESC`

// Search returns up to limit of the room's messages holding any of words, best first.
func (s *Store) Search(ctx context.Context, room string, words []string, limit int) ([]*parley.Message, error) {
	match := fulltext.FTS5(words)
	if match == "" || limit <= 0 {
		return nil, nil
	}
	if err := s.searchCurrent(ctx, room); err != nil {
		return nil, err
	}
	return s.RunSearch(ctx, querySearch, match, room, limit)
}
