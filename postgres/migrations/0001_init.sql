-- The room server's schema, the same as the SQLite store's. Bodies are bytea so that the bytes
-- come back exactly as posted (text would refuse NUL and, in a UTF8 database, invalid UTF-8);
-- notes are json rather than jsonb, which refuses \u0000.

CREATE TABLE rooms (
	name       text        NOT NULL PRIMARY KEY,
	policy     jsonb       NOT NULL,
	created_at timestamptz NOT NULL,
	last_seq   bigint      NOT NULL DEFAULT 0 -- the seq counter; Append raises it, locking the row
);

CREATE TABLE seats (
	room       text        NOT NULL REFERENCES rooms (name),
	name       text        NOT NULL,
	role       text        NOT NULL,
	token_hash bytea,
	created_at timestamptz NOT NULL,
	revoked_at timestamptz,
	PRIMARY KEY (room, name)
);

-- A token identifies exactly one seat on the whole server.
CREATE UNIQUE INDEX seats_token_hash ON seats (token_hash);

CREATE TABLE messages (
	room            text        NOT NULL REFERENCES rooms (name),
	seq             bigint      NOT NULL,
	seat            text        NOT NULL,
	time            timestamptz NOT NULL,
	format          text        NOT NULL,
	topic           text        NOT NULL DEFAULT '',
	intent          text        NOT NULL DEFAULT '',
	re              bigint      NOT NULL DEFAULT 0,
	body            bytea       NOT NULL,
	tokens          integer     NOT NULL DEFAULT 0,
	hash            bytea,
	notes           json        NOT NULL DEFAULT '[]',
	idempotency_key text,
	PRIMARY KEY (room, seq)
);

CREATE UNIQUE INDEX messages_idempotency ON messages (room, seat, idempotency_key)
	WHERE idempotency_key IS NOT NULL;
-- Dedup looks up a seat's messages by hash (window) and by recency (last N).
CREATE INDEX messages_seat_hash ON messages (room, seat, hash, seq);
CREATE INDEX messages_seat_seq ON messages (room, seat, seq);

CREATE TABLE asks (
	room      text        NOT NULL,
	seq       bigint      NOT NULL,
	line      integer     NOT NULL,
	from_seat text        NOT NULL,
	to_seat   text        NOT NULL,
	topic     text        NOT NULL DEFAULT '',
	text      text        NOT NULL DEFAULT '',
	due       timestamptz, -- NULL: no time was given
	dflt      text        NOT NULL DEFAULT '',
	decider   text        NOT NULL DEFAULT '',
	state     text        NOT NULL,
	closed_by bigint      NOT NULL DEFAULT 0,
	PRIMARY KEY (room, seq, line),
	FOREIGN KEY (room, seq) REFERENCES messages (room, seq)
);

CREATE INDEX asks_open_due ON asks (due) WHERE state = 'open' AND due IS NOT NULL;
CREATE INDEX asks_room_state ON asks (room, state, seq, line);

CREATE TABLE runs (
	room       text        NOT NULL REFERENCES rooms (name),
	id         text        NOT NULL,
	commit_sha text        NOT NULL DEFAULT '',
	passed     integer     NOT NULL,
	failed     integer     NOT NULL,
	seat       text        NOT NULL,
	time       timestamptz NOT NULL,
	PRIMARY KEY (room, id)
);

CREATE TABLE stats (
	room  text   NOT NULL REFERENCES rooms (name),
	seat  text   NOT NULL,
	key   text   NOT NULL,
	value bigint NOT NULL,
	PRIMARY KEY (room, seat, key)
);
