-- A topic's messages and asks are read through these indexes (Store.TopicMessages and
-- Store.TopicAsks, which the state record uses), so that reading one topic costs what the
-- topic holds, not what the room holds. PostgreSQL keeps them in the append's transaction.

CREATE INDEX messages_topic ON messages (room, topic, seq);
CREATE INDEX asks_topic ON asks (room, topic, seq, line);
