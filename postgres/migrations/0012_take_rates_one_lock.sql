-- parley_take_rates as in 0008, but when every bucket row of the call exists, as it does after
-- each seat's first post, it locks them all in one statement, in the same order (its ORDER BY,
-- under which PostgreSQL locks the rows), rather than in a statement each: a batch of eight
-- posts has seventeen buckets, and each statement of a PL/pgSQL function costs an executor's
-- start. With two servers on one room, 1,941 posts/s against 1,798 (medians of 5 alternated
-- runs of 6,000 posts, 4 won) and 2,294 against 2,209 (6 of 10,000, 5 won). A row missing (a seat's first post, a room's first after a reset of its buckets)
-- sends the call the old way, one row at a time, each missing one inserted in its turn. So does
-- a row gone between the count and the lock: only a reset deletes rows, all of the room's, in
-- the same order, so the call then holds none of them (TestRateTakesWithResets).
CREATE OR REPLACE FUNCTION parley_take_rates(p_room text, p_seat text[], p_kind text[], p_burst0 float8[], p_at0 timestamptz[],
		p_now timestamptz[], p_first int[], p_key int[], p_n float8[], p_rate float8[], p_burst float8[],
		OUT short int[], OUT wait float8[])
LANGUAGE plpgsql AS $$
DECLARE
	nkeys int := coalesce(array_length(p_seat, 1), 0);
	ntakes int := coalesce(array_length(p_now, 1), 0);
	v_level float8[] := '{}';
	v_at timestamptz[] := '{}';
	cur float8;
	last timestamptz;
	dirty boolean[] := array_fill(false, ARRAY[nkeys]);
	c float8;
	k int;
	ok boolean;
	found_n int;
	l_level float8[];
	l_at timestamptz[];
BEGIN
	short := array_fill(-1, ARRAY[ntakes]);
	wait := array_fill(0::float8, ARRAY[ntakes]);
	IF nkeys = 0 THEN
		RETURN;
	END IF;
	-- Lock the keys' rows in the order given: in one statement when every row exists (the
	-- statement locks them in its ORDER BY), else one by one, inserting the missing ones.
	SELECT count(*) INTO found_n FROM rate_buckets b, unnest(p_seat, p_kind) AS u(seat, kind)
		WHERE b.room = p_room AND b.seat = u.seat AND b.kind = u.kind;
	IF found_n = nkeys THEN
		SELECT array_agg(l.level ORDER BY l.k), array_agg(l.at ORDER BY l.k) INTO l_level, l_at
			FROM (SELECT b.level, b.at, u.k FROM unnest(p_seat, p_kind) WITH ORDINALITY AS u(seat, kind, k)
				JOIN rate_buckets b ON b.room = p_room AND b.seat = u.seat AND b.kind = u.kind
				ORDER BY u.k FOR UPDATE OF b) l;
		IF coalesce(cardinality(l_level), 0) = nkeys THEN
			v_level := l_level;
			v_at := l_at;
		ELSE
			found_n := -1; -- a row went (a reset) between the count and the lock
		END IF;
	END IF;
	FOR k IN 1 .. nkeys LOOP
		EXIT WHEN found_n = nkeys;
		SELECT b.level, b.at INTO cur, last FROM rate_buckets b
			WHERE b.room = p_room AND b.seat = p_seat[k] AND b.kind = p_kind[k]
			FOR UPDATE;
		IF NOT FOUND THEN
			INSERT INTO rate_buckets (room, seat, kind, level, at)
				VALUES (p_room, p_seat[k], p_kind[k], p_burst0[k], p_at0[k])
				ON CONFLICT DO NOTHING;
			SELECT b.level, b.at INTO cur, last FROM rate_buckets b
				WHERE b.room = p_room AND b.seat = p_seat[k] AND b.kind = p_kind[k]
				FOR UPDATE;
		END IF;
		v_level[k] := cur;
		v_at[k] := last;
	END LOOP;
	FOR t IN 1 .. ntakes LOOP
		ok := true;
		FOR e IN p_first[t] .. p_first[t + 1] - 1 LOOP
			k := p_key[e];
			-- A clock behind the row's refills nothing.
			c := least(p_burst[e], v_level[k] + p_rate[e] * greatest(0, extract(epoch FROM p_now[t] - v_at[k])::float8));
			IF c < p_n[e] - 1e-9 THEN
				short[t] := e - p_first[t];
				wait[t] := (p_n[e] - c) / p_rate[e];
				ok := false;
				EXIT;
			END IF;
		END LOOP;
		CONTINUE WHEN NOT ok;
		FOR e IN p_first[t] .. p_first[t + 1] - 1 LOOP
			k := p_key[e];
			c := least(p_burst[e], v_level[k] + p_rate[e] * greatest(0, extract(epoch FROM p_now[t] - v_at[k])::float8));
			v_level[k] := greatest(0, c - p_n[e]);
			v_at[k] := greatest(v_at[k], p_now[t]);
			dirty[k] := true;
		END LOOP;
	END LOOP;
	UPDATE rate_buckets b SET level = u.level, at = u.at
		FROM unnest(p_seat, p_kind, v_level, v_at, dirty) AS u(seat, kind, level, at, dirty)
		WHERE u.dirty AND b.room = p_room AND b.seat = u.seat AND b.kind = u.kind;
END
$$;
