-- parley_take_rates runs many takes in one call: the takes of one room that a process has
-- waiting at the same moment (a post's admission, a post's tokens), so that the room's own
-- bucket, which every post of the room takes from, is locked once per call rather than once per
-- post, and each take costs no statement and no transaction of its own.
--
-- Each take is all or none and is answered as parley_take_rate (0005) would have answered it,
-- called alone, after the takes before it in the call: short[t] = -1 when take t took, or else
-- the 0-based index, within the take, of its first bucket that lacks and the seconds until that
-- bucket holds its n (wait[t]), having taken nothing.
--
-- The buckets the call touches are its keys (p_seat[k], p_kind[k]), passed in the order every
-- caller locks rows in: the seats' message buckets by seat, the room's message bucket, the seats'
-- token buckets by seat. parley_take_rate and parley_give_rate lock a subset in that same order,
-- so no two calls can deadlock. A key seen for the first time starts full (p_burst0[k]) at the
-- time of the first take that names it (p_at0[k]), as that take's own call would have made it.
--
-- Take t is entries p_first[t] .. p_first[t+1]-1, each a key p_key[e] and the amount, refill rate
-- and burst of that bucket for it (p_n, p_rate, p_burst), at the take's time p_now[t].
CREATE FUNCTION parley_take_rates(p_room text, p_seat text[], p_kind text[], p_burst0 float8[], p_at0 timestamptz[],
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
	FOR k IN 1 .. nkeys LOOP
		CONTINUE WHEN NOT dirty[k];
		UPDATE rate_buckets SET level = v_level[k], at = v_at[k]
			WHERE room = p_room AND seat = p_seat[k] AND kind = p_kind[k];
	END LOOP;
END
$$;
