package sqlite

import (
	"context"
	"fmt"

	"github.com/parleyhq/parley"
)

// The topic reads run on the indexes of migration 0002 (messages_topic, asks_topic), so their
// cost is the topic's, not the room's; TestTopicQueryPlan holds them to it.
const (
	qTopicMessages = `SELECT ` + messageColumns + ` FROM messages
		WHERE room = ? AND topic = ? AND seq > ? ORDER BY seq LIMIT ?`
	qTopicAsks = `SELECT ` + askColumns + ` FROM asks
		WHERE room = ? AND topic = ? ORDER BY seq, line`
)

// TopicMessages returns the room's messages on topic with seq > after, in seq order, at most
// limit of them (limit <= 0: all).
func (s *Store) TopicMessages(ctx context.Context, room, topic string, after int64, limit int) ([]*parley.Message, error) {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := s.r.query(ctx, qTopicMessages, room, topic, after, limit)
	if err != nil {
		return nil, fmt.Errorf("topic messages: %w", err)
	}
	defer rows.Close()
	var msgs []*parley.Message
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, fmt.Errorf("topic messages: %w", err)
		}
		msgs = append(msgs, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("topic messages: %w", err)
	}
	return msgs, nil
}

// TopicAsks returns the room's asks on topic (Ask.Topic), in every state, by seq and line.
func (s *Store) TopicAsks(ctx context.Context, room, topic string) ([]*parley.Ask, error) {
	rows, err := s.r.query(ctx, qTopicAsks, room, topic)
	if err != nil {
		return nil, fmt.Errorf("topic asks: %w", err)
	}
	asks, err := scanAsks(rows)
	if err != nil {
		return nil, fmt.Errorf("topic asks: %w", err)
	}
	return asks, nil
}
