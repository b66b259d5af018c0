-- The search index is no longer written in every group commit: the committer (sqlite/batch.go)
-- indexes messages in chunks, and brings a room's index up to date before it is searched.
-- search_progress says, for each room, the seq up to which every message is in message_words;
-- it is updated in the transaction that indexes them, so after a crash or a restart the store
-- indexes what is missing when it opens. A room without a row has nothing indexed yet.
--
-- Up to this migration the index held every message (the trigger of 0003, then each group
-- commit): each room's progress is its last message. A database without the index (taken
-- away) gets no rows, so that an index built again later is filled from the start.

CREATE TABLE IF NOT EXISTS search_progress (
	room TEXT    NOT NULL PRIMARY KEY,
	seq  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

INSERT OR REPLACE INTO search_progress (room, seq)
	SELECT room, max(seq) FROM messages
	WHERE EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'message_words')
	GROUP BY room;
