-- The words of a message (0004) stop being a generated column. PostgreSQL prepares a generated
-- column's expression when each INSERT statement starts, and parley_body_text, a SQL function
-- it cannot inline (STRICT around a CASE), was parsed and planned again for every append: a
-- third of what an append's INSERT cost the server. Now Append computes the column in its own
-- INSERT, from the body it also sends as text when it is UTF-8 without NUL (what
-- parley_body_text returns for such a body), and a trigger computes it as 0004 did for every
-- other insert that leaves it NULL (an import, a body that is not UTF-8, an older parley
-- sharing the database), and again whenever a body changes. Dropping the expression keeps
-- every row's words and the GIN index; nothing is rewritten.
ALTER TABLE messages ALTER COLUMN words DROP EXPRESSION;

CREATE FUNCTION parley_words() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	NEW.words := to_tsvector('simple'::regconfig, parley_body_text(NEW.body));
	RETURN NEW;
END
$$;

CREATE TRIGGER messages_words BEFORE INSERT ON messages
	FOR EACH ROW WHEN (NEW.words IS NULL) EXECUTE FUNCTION parley_words();
CREATE TRIGGER messages_words_body BEFORE UPDATE OF body ON messages
	FOR EACH ROW EXECUTE FUNCTION parley_words();
