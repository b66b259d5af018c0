-- parley_take_rate and parley_take_rates (0008) as before, but a call locks its buckets' rows in
-- one statement instead of one SELECT … FOR UPDATE per bucket, whenever every one of them exists
-- (all but a bucket's first use). What a statement costs PostgreSQL is mostly starting it; a
-- post's take names three buckets, a room's batch of takes one per seat and kind plus the room's.
--
-- The rows are locked in the order the caller gives (rateKeyOrder), as before: the locking
-- clause applies to the rows as ORDER BY leaves them, so every call still takes its locks in one
-- global order and two calls cannot deadlock. The statement locks nothing unless its count, made
-- from the statement's snapshot before any row is locked, finds every bucket: a call whose
-- buckets are not all there yet takes the loop of before, key by key, inserting the missing ones
-- in order. A bucket deleted (ResetRates) between that count and its lock is skipped by the
-- lock; the loop then takes the keys left, in order. The only locks then held out of order are
-- ones the loop takes after rows of later keys: PostgreSQL breaks such a deadlock by failing one
-- call, which changed nothing, and the caller runs it again (retryDeadlock).

CREATE OR REPLACE FUNCTION parley_take_rate(p_room text, p_now timestamptz, p_seat text[], p_kind text[],
		p_n float8[], p_rate float8[], p_burst float8[], OUT short integer, OUT wait float8)
LANGUAGE plpgsql AS $$
DECLARE
	nkeys int := coalesce(array_length(p_seat, 1), 0);
	lvl float8[] := '{}';
	v_level float8[] := '{}';
	v_at timestamptz[] := '{}';
	cur float8;
	last timestamptz;
	r record;
BEGIN
	FOR r IN SELECT u.k, b.level, b.at
			FROM unnest(p_seat, p_kind) WITH ORDINALITY AS u(seat, kind, k)
			JOIN rate_buckets b ON b.room = p_room AND b.seat = u.seat AND b.kind = u.kind
			WHERE (SELECT count(*) FROM unnest(p_seat, p_kind) AS w(seat, kind)
				JOIN rate_buckets c ON c.room = p_room AND c.seat = w.seat AND c.kind = w.kind) = nkeys
			ORDER BY u.k
			FOR UPDATE OF b LOOP
		v_level[r.k] := r.level;
		v_at[r.k] := r.at;
	END LOOP;
	FOR i IN 1 .. nkeys LOOP
		IF v_at[i] IS NOT NULL THEN
			cur := v_level[i];
			last := v_at[i];
		ELSE
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
		END IF;
		-- A clock behind the row's refills nothing.
		cur := least(p_burst[i], cur + p_rate[i] * greatest(0, extract(epoch FROM p_now - last)::float8));
		IF cur < p_n[i] - 1e-9 THEN
			short := i - 1;
			wait := (p_n[i] - cur) / p_rate[i];
			RETURN;
		END IF;
		lvl[i] := greatest(0, cur - p_n[i]);
	END LOOP;
	UPDATE rate_buckets b SET level = u.level, at = greatest(b.at, p_now)
		FROM unnest(p_seat, p_kind, lvl) AS u(seat, kind, level)
		WHERE b.room = p_room AND b.seat = u.seat AND b.kind = u.kind;
	short := -1;
	wait := 0;
END
$$;

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
	r record;
BEGIN
	short := array_fill(-1, ARRAY[ntakes]);
	wait := array_fill(0::float8, ARRAY[ntakes]);
	IF nkeys = 0 THEN
		RETURN;
	END IF;
	-- Lock the keys' rows in the order given: all at once when they all exist, else (below)
	-- one by one.
	FOR r IN SELECT u.k, b.level, b.at
			FROM unnest(p_seat, p_kind) WITH ORDINALITY AS u(seat, kind, k)
			JOIN rate_buckets b ON b.room = p_room AND b.seat = u.seat AND b.kind = u.kind
			WHERE (SELECT count(*) FROM unnest(p_seat, p_kind) AS w(seat, kind)
				JOIN rate_buckets c ON c.room = p_room AND c.seat = w.seat AND c.kind = w.kind) = nkeys
			ORDER BY u.k
			FOR UPDATE OF b LOOP
		v_level[r.k] := r.level;
		v_at[r.k] := r.at;
	END LOOP;
	FOR k IN 1 .. nkeys LOOP
		CONTINUE WHEN v_at[k] IS NOT NULL;
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
