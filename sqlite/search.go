package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/fulltext"
	"github.com/parleyhq/parley/internal/sqlstore"
)

// A search runs in two steps, each on its own file: the room's best matches, ranked in the
// search file's FTS5 index (searchfile.go) by bm25, whose scores are negative, best lowest;
// then those messages, read from the database by (room, seq). Every seq the index holds is a
// committed message, and messages never change, so the second read always finds them.
const (
	qSearchRank = `SELECT seq FROM message_words WHERE message_words MATCH $1 AND room = $2
		ORDER BY bm25(message_words), seq DESC LIMIT $3`
	qSearchMessages = `SELECT ` + sqlstore.MessageColumns + ` FROM messages
		WHERE room = $1 AND seq IN (SELECT value FROM json_each($2))`
)

// Search returns up to limit of the room's messages holding any of words, best first.
func (s *Store) Search(ctx context.Context, room string, words []string, limit int) ([]*parley.Message, error) {
	match := fulltext.FTS5(words)
	if match == "" || limit <= 0 {
		return nil, nil
	}
	if s.search == nil {
		return nil, errors.New("search: this store was opened without its search index")
	}
	x := s.search
	var seqs []int64
	for attempt := 0; ; attempt++ {
		if err := x.current(ctx, room); err != nil {
			return nil, err
		}
		seqs = seqs[:0]
		gen, err := x.withFile(func() error {
			return x.r.Query(ctx, qSearchRank, []any{match, room, limit}, func(r sqlstore.Row) error {
				var seq int64
				err := r.Scan(&seq)
				seqs = append(seqs, seq)
				return err
			})
		})
		again, err := x.repair(ctx, gen, err, attempt)
		if err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		if !again {
			break
		}
	}
	if len(seqs) == 0 {
		return nil, nil
	}
	list, err := json.Marshal(seqs)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	byRank := make(map[int64]int, len(seqs))
	for i, seq := range seqs {
		byRank[seq] = i
	}
	out := make([]*parley.Message, len(seqs))
	err = s.r.Query(ctx, qSearchMessages, []any{room, string(list)}, func(r sqlstore.Row) error {
		m, err := sqlstore.ScanMessage(r)
		if err != nil {
			return err
		}
		out[byRank[m.Seq]] = m
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	for i, m := range out {
		if m == nil {
			return nil, fmt.Errorf("search: %s #%d is in the search index and not in the database", room, seqs[i])
		}
	}
	return out, nil
}
