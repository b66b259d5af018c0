-- parley_dedup_checks runs a batch's dedup checks (group.go) in one call, with a plan that each
-- connection makes once and keeps.
--
-- As one statement sent by the append, PostgreSQL planned the checks again for every batch (a
-- custom plan each time: planning was about a tenth of its CPU per post). A generic plan had
-- been tried and was unsafe: made on a small or never analysed table, it read the room through
-- another index and filtered the hash (TestDuplicateQueryPlanSmallTable). Here the query is the
-- same, but every lookup asks for an order that only the index meant for it gives without a
-- sort, and the function plans with sorts disabled: whatever the table's statistics say, a plan
-- reading another index would need a sort, and costs more than any plan reading the right one.
--
--  - the latest copy in the window and the latest copy: ORDER BY hash, seq under an equality on
--    room and seat and a range of one value on the hash, which only messages_seat_hash
--    (room, seat, hash, seq) gives in order;
--  - the seat's messages after the latest copy, counted up to N: ORDER BY seq under an equality
--    on room and seat, which messages_seat_seq (room, seat, seq) gives, reading no other seat's
--    rows (the primary key gives the order too, but filtering the seat costs it more).
--
-- Arguments: $1 the room; then one array element per check: $2 the seat, $3 the hash, $4 the
-- window's start or NULL, $5 the last N (0: none). One row per check: nth (1-based), the latest
-- copy's seq in the window or 0, the latest copy's seq when N > 0 or 0, and how many of the
-- seat's messages follow that copy, counted up to N (qCheck in group.go is one check alone).
--
-- TestDuplicateQueryPlan reads this function's query and settings back from pg_proc and
-- checks the plan they make on a table never analysed.
CREATE FUNCTION parley_dedup_checks(text, text[], bytea[], timestamptz[], bigint[])
	RETURNS TABLE (nth bigint, window_seq bigint, latest_seq bigint, after_latest bigint)
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan
SET enable_sort = off
AS $$
BEGIN
	RETURN QUERY SELECT u.i,
	coalesce((SELECT w.seq FROM messages w
		WHERE u.since IS NOT NULL AND w.room = $1 AND w.seat = u.seat AND w.hash >= u.hash AND w.hash <= u.hash AND w.time > u.since
		ORDER BY w.hash DESC, w.seq DESC LIMIT 1), 0),
	coalesce(h.seq, 0),
	(SELECT count(*) FROM (SELECT 1 FROM messages a WHERE a.room = $1 AND a.seat = u.seat AND a.seq > h.seq
		ORDER BY a.seq LIMIT u.n) later)
FROM unnest($2, $3, $4, $5) WITH ORDINALITY AS u(seat, hash, since, n, i)
LEFT JOIN LATERAL (SELECT l.seq FROM messages l
	WHERE u.n > 0 AND l.room = $1 AND l.seat = u.seat AND l.hash >= u.hash AND l.hash <= u.hash
	ORDER BY l.hash DESC, l.seq DESC LIMIT 1) h ON true;
END
$$;
