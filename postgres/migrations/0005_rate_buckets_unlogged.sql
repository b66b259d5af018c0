-- Every post takes from its rate buckets twice (its messages, then its tokens), so their cost
-- counts in the posts per second of a room, on every process at once: each take locks the
-- room's own bucket.
--
-- The buckets need no durability (0002): losing them in a crash grants at most one burst more,
-- as a bucket seen for the first time starts full. So the table is unlogged: its writes add
-- nothing to the WAL that the appends' commits flush, and a take commits without any flush
-- of its own (a transaction that wrote no WAL does not wait for one). After a crash, or on a
-- standby promoted after a failover, the table starts empty: every bucket full.
ALTER TABLE rate_buckets SET UNLOGGED;

-- parley_take_rate as in 0002, but a bucket's row is inserted only when it is not there yet,
-- instead of an INSERT … ON CONFLICT on every take (one statement fewer per bucket), and the
-- synchronous_commit setting went with the WAL.
CREATE OR REPLACE FUNCTION parley_take_rate(p_room text, p_now timestamptz, p_seat text[], p_kind text[],
		p_n float8[], p_rate float8[], p_burst float8[], OUT short integer, OUT wait float8)
LANGUAGE plpgsql AS $$
DECLARE
	lvl float8[] := '{}';
	cur float8;
	last timestamptz;
BEGIN
	FOR i IN 1 .. coalesce(array_length(p_seat, 1), 0) LOOP
		SELECT b.level, b.at INTO cur, last FROM rate_buckets b
			WHERE b.room = p_room AND b.seat = p_seat[i] AND b.kind = p_kind[i]
			FOR UPDATE;
		IF NOT FOUND THEN
			INSERT INTO rate_buckets (room, seat, kind, level, at)
				VALUES (p_room, p_seat[i], p_kind[i], p_burst[i], p_now)
				ON CONFLICT DO NOTHING;
			SELECT b.level, b.at INTO cur, last FROM rate_buckets b
				WHERE b.room = p_room AND b.seat = p_seat[i] AND b.kind = p_kind[i]
				FOR UPDATE;
		END IF;
		-- A clock behind the row's refills nothing.
		cur := least(p_burst[i], cur + p_rate[i] * greatest(0, extract(epoch FROM p_now - last)::float8));
		IF cur < p_n[i] - 1e-9 THEN
			short := i - 1;
			wait := (p_n[i] - cur) / p_rate[i];
			RETURN;
		END IF;
		lvl[i] := cur;
	END LOOP;
	FOR i IN 1 .. coalesce(array_length(p_seat, 1), 0) LOOP
		UPDATE rate_buckets SET level = greatest(0, lvl[i] - p_n[i]), at = greatest(at, p_now)
			WHERE room = p_room AND seat = p_seat[i] AND kind = p_kind[i];
	END LOOP;
	short := -1;
	wait := 0;
END
$$;
