-- The index on (room, seat, seq) goes. Every post from a seat other than the last one's
-- dirtied another leaf of it, so it cost about one page written to the WAL per post, and its
-- queries have other ways now (sqlite/dedup.go, sqlite/store.go): a seat's latest messages are
-- read through the primary key (room, seq), and whether a message is among the seat's last N
-- is counted from the committer's memory, or through the primary key and the index on
-- (room, seat, hash, seq), which stays, the exact lookup of a seat's messages by hash.

DROP INDEX IF EXISTS messages_seat_seq;
