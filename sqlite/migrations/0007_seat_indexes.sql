-- Fewer pages written per post. Every post from a seat other than the one before dirtied a
-- leaf of each index keyed by seat: about one page written to the WAL per post per index.
--
-- The index on (room, seat, seq) goes: a seat's latest messages are read through the primary
-- key (room, seq), and whether a message is among the seat's last N is counted from the
-- committer's memory, or through the primary key and the seat's hash index (sqlite/dedup.go,
-- sqlite/store.go).
--
-- The index on (room, seat, hash, seq) is replaced by one on the hash's first 8 bytes: its
-- entries are half as long, so its leaves split half as often (each split writes two more
-- pages). A lookup finds the messages whose hash starts with those bytes (almost always the
-- ones with the same hash) and compares the whole hash in the row: as exact as before.

DROP INDEX IF EXISTS messages_seat_seq;
DROP INDEX IF EXISTS messages_seat_hash;
CREATE INDEX IF NOT EXISTS messages_seat_hash_prefix ON messages (room, seat, substr(hash, 1, 8), seq);
