-- The search index moves out of this database into a file of its own beside it (PATH-search,
-- sqlite/searchfile.go), written by a goroutine of its own beside the committer rather than
-- inside its transactions. It is derived data: the store builds it from the messages when the
-- file is missing, so the index and its progress leave this database, and the first start
-- after the upgrade indexes every message again, in the background (the old index cannot be
-- copied: being contentless, it does not hold the bodies). The pages they held are free pages
-- of the file until a VACUUM.
--
-- database_id names this database, so that a search file made from another one (a different
-- database, or a database replaced by another's backup at the same path) is recognised and
-- built again. Backups copy it: a backup restored over its own database keeps the id, and the
-- store checks that case by the rooms' progress instead.

DROP TRIGGER IF EXISTS message_words_index;
DROP TABLE IF EXISTS message_words;
-- SQLite 3.54 leaves a contentless_unindexed table's _content shadow table behind when the
-- table is dropped.
DROP TABLE IF EXISTS message_words_content;
DROP TABLE IF EXISTS search_progress;

CREATE TABLE IF NOT EXISTS database_id (
	id TEXT NOT NULL PRIMARY KEY
) STRICT;

INSERT INTO database_id (id) SELECT lower(hex(randomblob(16))) WHERE NOT EXISTS (SELECT 1 FROM database_id);
