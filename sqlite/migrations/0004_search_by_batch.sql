-- The search index is no longer kept by a trigger: the store's committer (sqlite/group.go)
-- adds the messages of each group commit to it in one statement, in the same transaction,
-- just before COMMIT. A trigger wrote the index inside every append's savepoint, and FTS5
-- writes its pending terms to disk whenever a savepoint is released, so a batch of N posts
-- made N tiny index segments (and their merges) instead of one. The index stays exactly what
-- the trigger kept: every stored message, indexed in the transaction that stores it.
--
-- A database migrated this far has every earlier message indexed (by the trigger, or by the
-- backfill of 0003), so dropping the trigger is all there is to do.

DROP TRIGGER IF EXISTS message_words_index;
