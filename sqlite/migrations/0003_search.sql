-- Full-text search (Store.Search): an FTS5 index of every message's body, its words as the
-- unicode61 tokenizer splits them (runs of letters and numbers, lower-cased, diacritics kept so
-- that both stores match the same words). It is contentless: the bodies stay in messages and
-- only the index and each row's room and seq (contentless_unindexed) are kept here, so a
-- match finds its message by (room, seq), which VACUUM and backups never renumber.
--
-- The trigger indexes every message in the transaction that stores it, whoever writes it:
-- Append, ImportRoom (parley import) and restores alike. The INSERT below indexes the
-- messages of a database made before this migration.

CREATE VIRTUAL TABLE message_words USING fts5(
	room UNINDEXED,
	seq UNINDEXED,
	body,
	content = '',
	contentless_unindexed = 1,
	tokenize = 'unicode61 remove_diacritics 0'
);

CREATE TRIGGER message_words_index AFTER INSERT ON messages BEGIN
	INSERT INTO message_words (room, seq, body) VALUES (new.room, new.seq, CAST(new.body AS TEXT));
END;

INSERT INTO message_words (room, seq, body)
	SELECT room, seq, CAST(body AS TEXT) FROM messages ORDER BY room, seq;
