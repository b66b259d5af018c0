-- A seat's messages are found through a table of their own, written in bulk, instead of an
-- index on messages that every post wrote.
--
-- The index on (room, seat, substr(hash, 1, 8), seq) put each seat's entries together, so
-- every post dirtied a leaf of its seat's part of the index: about one page written to the WAL
-- per post, half of what a post wrote. seat_index holds the same entries. The committer
-- writes a room's entries there not with each post but with every thousand or so of its posts
-- (sqlite/seatindex.go), all at once, so that a page takes the entries of many posts of the
-- same seat. seat_indexed holds, for each room, the last seq whose entry is in seat_index
-- (none: 0): every message of the room up to it has its entry there, and none after it. A
-- lookup reads seat_index and then the room's messages after that seq (at most about a
-- thousand), through the primary key. Like the migrations before it, this one can run again
-- over its own work.

CREATE TABLE IF NOT EXISTS seat_index (
	room TEXT    NOT NULL,
	seat TEXT    NOT NULL,
	h8   BLOB    NOT NULL, -- the hash's first 8 bytes (empty: no hash)
	seq  INTEGER NOT NULL,
	PRIMARY KEY (room, seat, h8, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS seat_indexed (
	room TEXT    NOT NULL PRIMARY KEY,
	seq  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

INSERT OR IGNORE INTO seat_index (room, seat, h8, seq)
	SELECT room, seat, coalesce(substr(hash, 1, 8), x''), seq FROM messages;
INSERT INTO seat_indexed (room, seq) SELECT room, max(seq) FROM messages WHERE true GROUP BY room
	ON CONFLICT (room) DO UPDATE SET seq = excluded.seq;

DROP INDEX IF EXISTS messages_seat_hash_prefix;
