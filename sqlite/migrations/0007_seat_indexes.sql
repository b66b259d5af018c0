-- Fewer pages written per post. Every post from a seat other than the one before dirtied a
-- leaf of each index keyed by seat: about one page written to the WAL per post per index.
--
-- The index on (room, seat, seq) goes. Its queries go through the index below instead, whose
-- entries carry the seq too (sqlite/dedup.go, sqlite/store.go): a seat's latest messages are
-- found by sorting its entries there, and whether a message is among the seat's last N is
-- counted there, when the committer's memory of the seat does not already say.
--
-- The index on (room, seat, hash, seq) is replaced by one on the hash's first 8 bytes: its
-- entries are half as long, so its leaves split half as often (each split writes two more
-- pages). A lookup finds the messages whose hash starts with those bytes (almost always the
-- ones with the same hash) and compares the whole hash in the row: as exact as before.

DROP INDEX IF EXISTS messages_seat_seq;
DROP INDEX IF EXISTS messages_seat_hash;
CREATE INDEX IF NOT EXISTS messages_seat_hash_prefix ON messages (room, seat, substr(hash, 1, 8), seq);
