-- Full-text search (Store.Search): each message's words as a tsvector of the simple
-- configuration (runs of letters and numbers, lower-cased, no stemming and no stop words, so
-- that both stores match the same words), kept in a generated column and indexed with GIN.
-- Adding the column computes it for the messages already stored; every later insert, by
-- Append or ImportRoom (parley import), computes it in the same statement.
--
-- Bodies are bytea and may, from an import or an older server, hold bytes that are not UTF-8;
-- parley_body_text reads those with every byte outside printable ASCII escaped, so that such a
-- body is still stored and its ASCII words still found.

CREATE FUNCTION parley_body_text(b bytea) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
	RETURN convert_from(b, 'UTF8');
EXCEPTION WHEN OTHERS THEN
	RETURN encode(b, 'escape');
END
$$;

ALTER TABLE messages ADD COLUMN words tsvector
	GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, parley_body_text(body))) STORED;

CREATE INDEX messages_words ON messages USING gin (words);
