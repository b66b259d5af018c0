-- Full-text search (Store.Search): each message's words as a tsvector of the simple
-- configuration (runs of letters and numbers, lower-cased, no stemming and no stop words, so
-- that both stores match the same words), kept in a generated column and indexed with GIN.
-- Adding the column computes it for the messages already stored; every later insert, by
-- Append or ImportRoom (parley import), computes it in the same statement.
--
-- Bodies are bytea and may, from an import or an older server, hold bytes that are not UTF-8
-- or a NUL, which convert_from refuses. parley_body_text reads such a body with every byte
-- outside printable ASCII escaped, so that it is still stored and its ASCII words still found.
-- It tells them apart without an exception handler, which would cost a subtransaction on every
-- insert: the body read as LATIN1 (one character per byte, which never fails but on NUL) must
-- match the byte patterns of well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates,
-- nothing past U+10FFFF).

CREATE FUNCTION parley_body_text(b bytea) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
	SELECT CASE
		WHEN position('\x00'::bytea IN b) > 0 THEN encode(b, 'escape')
		WHEN convert_from(b, 'LATIN1') ~ '^([\x01-\x7f]|[\xc2-\xdf][\x80-\xbf]|\xe0[\xa0-\xbf][\x80-\xbf]|[\xe1-\xec\xee\xef][\x80-\xbf][\x80-\xbf]|\xed[\x80-\x9f][\x80-\xbf]|\xf0[\x90-\xbf][\x80-\xbf][\x80-\xbf]|[\xf1-\xf3][\x80-\xbf][\x80-\xbf][\x80-\xbf]|\xf4[\x80-\x8f][\x80-\xbf][\x80-\xbf])*$'
			THEN convert_from(b, 'UTF8')
		ELSE encode(b, 'escape')
	END
$$;

ALTER TABLE messages ADD COLUMN words tsvector
	GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, parley_body_text(body))) STORED;

CREATE INDEX messages_words ON messages USING gin (words);
