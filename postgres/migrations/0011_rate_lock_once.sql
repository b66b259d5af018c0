-- parley_take_rate_held and parley_take_rates_held: parley_take_rate and parley_take_rates (0008)
-- for buckets that all exist already, which is every take but the first ones of a seat or a
-- room (and the first after a reset). Each locks and reads all its buckets in one statement,
-- where the functions of 0008 ran one SELECT … FOR UPDATE per bucket: a post's take locks three
-- (its seat's messages and tokens, its room's messages), and what PostgreSQL spends on a
-- statement that a function runs is mostly starting it, not the row it reads.
--
-- The rows are locked in the order of the arrays, as before (rateKeyOrder): the lookup of each
-- bucket, by the primary key, is a subquery with its own locking clause, which PostgreSQL cannot
-- merge into the join, so it runs once for each element of the arrays, in their order, and
-- locks that element's row then. A call holds the buckets before the one it waits for, and no
-- other (TestRateLockOrder). A join with the locking clause outside would be free to read the
-- room's rows first, in the table's order, and filter them. The arithmetic after the lock is the
-- one of 0008, line for line, so every answer and every bucket written are the same.
--
-- A bucket that is not there yet cannot be inserted here: the call would already hold the
-- buckets after it in the order, and a call of another process that inserted it and waits for
-- one of those would deadlock with this one. So when a row is missing the call fails with
-- SQLSTATE RB001 before it changes anything; the failed statement's transaction ends and
-- releases every lock it took, and the store runs the take again through the 0008 function,
-- which locks or inserts each bucket in turn.

CREATE FUNCTION parley_take_rate_held(p_room text, p_now timestamptz, p_seat text[], p_kind text[],
		p_n float8[], p_rate float8[], p_burst float8[], OUT short integer, OUT wait float8)
LANGUAGE plpgsql AS $$
DECLARE
	nkeys int := coalesce(array_length(p_seat, 1), 0);
	v_level float8[];
	v_at timestamptz[];
	v_tid tid[];
	found_n int := 0;
	r record;
	cur float8;
BEGIN
	FOR r IN SELECT u.i, b.level, b.at, b.ctid
		FROM unnest(p_seat, p_kind) WITH ORDINALITY AS u(seat, kind, i)
		CROSS JOIN LATERAL (SELECT b.level, b.at, b.ctid FROM rate_buckets b
			WHERE b.room = p_room AND b.seat = u.seat AND b.kind = u.kind FOR UPDATE) b
	LOOP
		v_level[r.i] := r.level;
		v_at[r.i] := r.at;
		v_tid[r.i] := r.ctid;
		found_n := found_n + 1;
	END LOOP;
	IF found_n < nkeys THEN
		RAISE EXCEPTION 'a rate bucket of room % does not exist yet', p_room USING ERRCODE = 'RB001';
	END IF;
	FOR i IN 1 .. nkeys LOOP
		-- A clock behind the row's refills nothing.
		cur := least(p_burst[i], v_level[i] + p_rate[i] * greatest(0, extract(epoch FROM p_now - v_at[i])::float8));
		IF cur < p_n[i] - 1e-9 THEN
			short := i - 1;
			wait := (p_n[i] - cur) / p_rate[i];
			RETURN;
		END IF;
		v_level[i] := greatest(0, cur - p_n[i]);
	END LOOP;
	UPDATE rate_buckets b SET level = v_level[array_position(v_tid, b.ctid)], at = greatest(b.at, p_now)
		WHERE b.ctid = ANY(v_tid);
	short := -1;
	wait := 0;
END
$$;

CREATE FUNCTION parley_take_rates_held(p_room text, p_seat text[], p_kind text[], p_burst0 float8[], p_at0 timestamptz[],
		p_now timestamptz[], p_first int[], p_key int[], p_n float8[], p_rate float8[], p_burst float8[],
		OUT short int[], OUT wait float8[])
LANGUAGE plpgsql AS $$
DECLARE
	nkeys int := coalesce(array_length(p_seat, 1), 0);
	ntakes int := coalesce(array_length(p_now, 1), 0);
	v_level float8[];
	v_at timestamptz[];
	v_tid tid[];
	found_n int := 0;
	r record;
	dirty boolean[] := array_fill(false, ARRAY[nkeys]);
	d_tid tid[] := '{}';
	d_level float8[] := '{}';
	d_at timestamptz[] := '{}';
	c float8;
	k int;
	ok boolean;
BEGIN
	short := array_fill(-1, ARRAY[ntakes]);
	wait := array_fill(0::float8, ARRAY[ntakes]);
	IF nkeys = 0 THEN
		RETURN;
	END IF;
	-- Lock the keys' rows in the order given, and read them.
	FOR r IN SELECT u.i, b.level, b.at, b.ctid
		FROM unnest(p_seat, p_kind) WITH ORDINALITY AS u(seat, kind, i)
		CROSS JOIN LATERAL (SELECT b.level, b.at, b.ctid FROM rate_buckets b
			WHERE b.room = p_room AND b.seat = u.seat AND b.kind = u.kind FOR UPDATE) b
	LOOP
		v_level[r.i] := r.level;
		v_at[r.i] := r.at;
		v_tid[r.i] := r.ctid;
		found_n := found_n + 1;
	END LOOP;
	IF found_n < nkeys THEN
		RAISE EXCEPTION 'a rate bucket of room % does not exist yet', p_room USING ERRCODE = 'RB001';
	END IF;
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
		IF dirty[k] THEN
			d_tid := d_tid || v_tid[k];
			d_level := d_level || v_level[k];
			d_at := d_at || v_at[k];
		END IF;
	END LOOP;
	UPDATE rate_buckets b SET level = d_level[array_position(d_tid, b.ctid)], at = d_at[array_position(d_tid, b.ctid)]
		WHERE b.ctid = ANY(d_tid);
END
$$;
