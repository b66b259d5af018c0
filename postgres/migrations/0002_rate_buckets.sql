-- The rate caps' token buckets (parley.RateBucket), shared by every process on the database,
-- so that together they grant a seat and a room the allowance one process would. A row holds
-- what its bucket held at time at; the refill since then is computed when it is next used.
-- A bucket seen for the first time starts full.

CREATE TABLE rate_buckets (
	room  text             NOT NULL REFERENCES rooms (name),
	seat  text             NOT NULL, -- '' for the room's own bucket
	kind  text             NOT NULL, -- 'messages' or 'tokens'
	level double precision NOT NULL,
	at    timestamptz      NOT NULL,
	PRIMARY KEY (room, seat, kind)
);

-- parley_take_rate takes n[i] from every bucket i of the room at time now, all or none, in one
-- round trip. It returns short = -1 when it took, or else the 0-based index of the first
-- bucket that lacks and the seconds until that bucket holds its n, having taken nothing.
-- Callers pass buckets in one order (seat messages, room messages, seat tokens), so that the
-- row locks are always taken in that order and two calls cannot deadlock.
--
-- The buckets need no durability: a crash that loses the last updates grants a few posts
-- more. So the call's own transaction commits without waiting for the WAL flush, and does
-- not hold the room's bucket through one.
CREATE FUNCTION parley_take_rate(p_room text, p_now timestamptz, p_seat text[], p_kind text[],
		p_n float8[], p_rate float8[], p_burst float8[], OUT short integer, OUT wait float8)
LANGUAGE plpgsql AS $$
DECLARE
	lvl float8[] := '{}';
	cur float8;
	last timestamptz;
BEGIN
	PERFORM set_config('synchronous_commit', 'off', true);
	FOR i IN 1 .. coalesce(array_length(p_seat, 1), 0) LOOP
		INSERT INTO rate_buckets (room, seat, kind, level, at)
			VALUES (p_room, p_seat[i], p_kind[i], p_burst[i], p_now)
			ON CONFLICT DO NOTHING;
		SELECT b.level, b.at INTO cur, last FROM rate_buckets b
			WHERE b.room = p_room AND b.seat = p_seat[i] AND b.kind = p_kind[i]
			FOR UPDATE;
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

-- parley_give_rate gives n[i] back to every bucket i, up to its burst.
CREATE FUNCTION parley_give_rate(p_room text, p_now timestamptz, p_seat text[], p_kind text[],
		p_n float8[], p_rate float8[], p_burst float8[])
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	PERFORM set_config('synchronous_commit', 'off', true);
	FOR i IN 1 .. coalesce(array_length(p_seat, 1), 0) LOOP
		UPDATE rate_buckets
			SET level = least(p_burst[i], level + p_rate[i] * greatest(0, extract(epoch FROM p_now - at)::float8) + p_n[i]),
				at = greatest(at, p_now)
			WHERE room = p_room AND seat = p_seat[i] AND kind = p_kind[i];
	END LOOP;
END
$$;
