-- parley_take_rate (0005) and parley_take_rates (0006) as before, but a call writes its buckets
-- back in one UPDATE instead of one per bucket. A post's take names three buckets (its seat's
-- messages, its room's, its seat's tokens), and what PostgreSQL spends on each statement a
-- function runs is mostly starting it, not the row it changes. The rows are the ones the call
-- locked first, in the same order as before, so the locking and every answer are unchanged; a
-- call names each bucket once.

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
BEGIN
	short := array_fill(-1, ARRAY[ntakes]);
	wait := array_fill(0::float8, ARRAY[ntakes]);
	IF nkeys = 0 THEN
		RETURN;
	END IF;
	-- Lock the keys' rows in the order given.
	FOR k IN 1 .. nkeys LOOP
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
