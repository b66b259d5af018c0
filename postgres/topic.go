package postgres

import (
	"context"
	"fmt"

	"github.com/parleyhq/parley"
)

// The topic reads run on the indexes of migration 0003 (messages_topic, asks_topic), so their
// cost is the topic's, not the room's.
const (
	qTopicMessages = `SELECT ` + messageColumns + ` FROM messages
		WHERE room = $1 AND topic = $2 AND seq > $3 ORDER BY seq LIMIT $4`
	qTopicAsks = `SELECT ` + askColumns + ` FROM asks
		WHERE room = $1 AND topic = $2 ORDER BY seq, line`
)

// TopicMessages returns the room's messages on topic with seq > after, in seq order, at most
// limit of them (limit <= 0: all).
func (s *Store) TopicMessages(ctx context.Context, room, topic string, after int64, limit int) ([]*parley.Message, error) {
	var lim *int
	if limit > 0 {
		lim = &limit // LIMIT NULL: no limit
	}
	rows, err := s.pool.Query(ctx, qTopicMessages, room, topic, after, lim)
	if err != nil {
		return nil, fmt.Errorf("topic messages: %w", err)
	}
	msgs, err := collectMessages(rows)
	if err != nil {
		return nil, fmt.Errorf("topic messages: %w", err)
	}
	return msgs, nil
}

// TopicAsks returns the room's asks on topic (Ask.Topic), in every state, by seq and line.
func (s *Store) TopicAsks(ctx context.Context, room, topic string) ([]*parley.Ask, error) {
	rows, err := s.pool.Query(ctx, qTopicAsks, room, topic)
	if err != nil {
		return nil, fmt.Errorf("topic asks: %w", err)
	}
	asks, err := collectAsks(rows)
	if err != nil {
		return nil, fmt.Errorf("topic asks: %w", err)
	}
	return asks, nil
}
