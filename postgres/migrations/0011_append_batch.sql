-- parley_append_batch stores a batch of appends whose checks ran before the room's lock was
-- taken (group.go, the checked-ahead batch), in one call: the lock, a test that the checks still
-- hold, the messages, the room's new last seq and its notification.
--
-- A batch that takes the room's lock before its checks holds it through two round trips and
-- two wake-ups of the process that sent them (the checks' answer, then the writes and the
-- commit). With two processes on one room, the posts per second are bounded by how long each
-- holds the lock, and on a busy host most of that is waiting to be scheduled. Here the lock is
-- held only while this function runs and the transaction commits.
--
-- The checks (the seats, the idempotency keys, the dedup checks) read only the batch's seats'
-- messages. So they still hold if no message of those seats was stored since they ran: every
-- message stored since then has a seq above the last seq they saw ($3), and this function reads
-- them after taking the lock (in READ COMMITTED each statement of a volatile function takes a
-- new snapshot, in which every commit before the lock was granted is seen). When one of them is
-- the batch's seats', nothing is written and the answer is -1: the batch runs again the old way,
-- its checks under the lock.
--
-- Arguments: $1 the room, $2 the batch's seats, $3 the last seq the checks saw, $4 the
-- notification's channel; then one array per column of the messages (as qInsertMessages in
-- group.go), their seqs numbered on from $3. Each message is stored at its seq moved by how
-- far the room's last seq went on since the checks.
--
-- Answer: the room's last seq before the batch (the batch's first seq is one more), or -1 when
-- the checks no longer hold, or NULL when the room is gone.
CREATE FUNCTION parley_append_batch(p_room text, p_seats text[], p_seen bigint, p_channel text,
	p_seq bigint[], p_seat text[], p_time timestamptz[], p_format text[], p_topic text[], p_intent text[],
	p_re bigint[], p_body bytea[], p_tokens integer[], p_hash bytea[], p_notes json[], p_key text[], p_words text[])
	RETURNS bigint
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	v_last bigint;
	v_n bigint := cardinality(p_seq);
BEGIN
	SELECT last_seq INTO v_last FROM rooms WHERE name = p_room FOR NO KEY UPDATE;
	IF NOT FOUND THEN
		RETURN NULL;
	END IF;
	IF v_last <> p_seen AND EXISTS (SELECT 1 FROM messages
		WHERE room = p_room AND seq > p_seen AND seq <= v_last AND seat = ANY(p_seats)) THEN
		RETURN -1;
	END IF;
	INSERT INTO messages
		(room, seq, seat, time, format, topic, intent, re, body, tokens, hash, notes, idempotency_key, words)
	SELECT p_room, m.seq - p_seen + v_last, m.seat, m.time, m.format, m.topic, m.intent, m.re, m.body,
		m.tokens, m.hash, m.notes, m.key, to_tsvector('simple'::regconfig, m.words)
	FROM unnest(p_seq, p_seat, p_time, p_format, p_topic, p_intent, p_re, p_body, p_tokens, p_hash,
		p_notes, p_key, p_words) AS m(seq, seat, time, format, topic, intent, re, body, tokens, hash, notes, key, words);
	UPDATE rooms SET last_seq = v_last + v_n WHERE name = p_room;
	PERFORM pg_notify(p_channel, (v_last + v_n)::text || ' ' || p_room);
	RETURN v_last;
END
$$;
