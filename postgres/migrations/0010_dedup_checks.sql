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
-- Each check looks its hash up once, for the seat's latest copy, and in the common case (no
-- copy at all) that is all it reads. The window's copy is that one when it was posted after the
-- window's start; only otherwise (a copy with a later seq may carry an earlier time: the servers'
-- clocks and the order of a batch differ) is the window looked up on its own. The count after
-- the copy runs only when there is a copy and N > 0.
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
	CASE WHEN h.seq IS NULL OR u.since IS NULL THEN 0
		WHEN h.time > u.since THEN h.seq
		ELSE coalesce((SELECT w.seq FROM messages w
			WHERE w.room = $1 AND w.seat = u.seat AND w.hash >= u.hash AND w.hash <= u.hash AND w.time > u.since
			ORDER BY w.hash DESC, w.seq DESC LIMIT 1), 0) END,
	CASE WHEN u.n > 0 THEN coalesce(h.seq, 0) ELSE 0 END,
	CASE WHEN u.n > 0 AND h.seq IS NOT NULL THEN (SELECT count(*) FROM (SELECT 1 FROM messages a
		WHERE a.room = $1 AND a.seat = u.seat AND a.seq > h.seq
		ORDER BY a.seq LIMIT u.n) later) ELSE 0 END
FROM unnest($2, $3, $4, $5) WITH ORDINALITY AS u(seat, hash, since, n, i)
LEFT JOIN LATERAL (SELECT l.seq, l.time FROM messages l
	WHERE l.room = $1 AND l.seat = u.seat AND l.hash >= u.hash AND l.hash <= u.hash
	ORDER BY l.hash DESC, l.seq DESC LIMIT 1) h ON true;
END
$$;
