-- The room server's schema. Times are INTEGER microseconds since the Unix epoch, UTC (the
-- precision PostgreSQL keeps, so both stores return identical times). Bodies are BLOBs so that
-- the bytes come back exactly as posted.

CREATE TABLE rooms (
	name       TEXT    NOT NULL PRIMARY KEY,
	policy     TEXT    NOT NULL, -- parley.Policy as JSON
	created_at INTEGER NOT NULL,
	last_seq   INTEGER NOT NULL DEFAULT 0 -- the seq counter; Append raises it in its transaction
) STRICT;

CREATE TABLE seats (
	room       TEXT    NOT NULL REFERENCES rooms (name),
	name       TEXT    NOT NULL,
	role       TEXT    NOT NULL,
	token_hash BLOB,
	created_at INTEGER NOT NULL,
	revoked_at INTEGER,
	PRIMARY KEY (room, name)
) STRICT;

-- A token identifies exactly one seat on the whole server.
CREATE UNIQUE INDEX seats_token_hash ON seats (token_hash);

CREATE TABLE messages (
	room            TEXT    NOT NULL REFERENCES rooms (name),
	seq             INTEGER NOT NULL,
	seat            TEXT    NOT NULL,
	time            INTEGER NOT NULL,
	format          TEXT    NOT NULL,
	topic           TEXT    NOT NULL DEFAULT '',
	intent          TEXT    NOT NULL DEFAULT '',
	re              INTEGER NOT NULL DEFAULT 0,
	body            BLOB    NOT NULL,
	tokens          INTEGER NOT NULL DEFAULT 0,
	hash            BLOB,
	notes           TEXT    NOT NULL DEFAULT '[]', -- JSON array of strings
	idempotency_key TEXT,
	PRIMARY KEY (room, seq)
) STRICT;

CREATE UNIQUE INDEX messages_idempotency ON messages (room, seat, idempotency_key)
	WHERE idempotency_key IS NOT NULL;
-- Dedup looks up a seat's messages by hash (window) and by recency (last N).
CREATE INDEX messages_seat_hash ON messages (room, seat, hash, seq);
CREATE INDEX messages_seat_seq ON messages (room, seat, seq);

CREATE TABLE asks (
	room      TEXT    NOT NULL,
	seq       INTEGER NOT NULL,
	line      INTEGER NOT NULL,
	from_seat TEXT    NOT NULL,
	to_seat   TEXT    NOT NULL,
	topic     TEXT    NOT NULL DEFAULT '',
	text      TEXT    NOT NULL DEFAULT '',
	due       INTEGER, -- NULL: no time was given
	dflt      TEXT    NOT NULL DEFAULT '',
	decider   TEXT    NOT NULL DEFAULT '',
	state     TEXT    NOT NULL,
	closed_by INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (room, seq, line),
	FOREIGN KEY (room, seq) REFERENCES messages (room, seq)
) STRICT;

CREATE INDEX asks_open_due ON asks (due) WHERE state = 'open' AND due IS NOT NULL;
CREATE INDEX asks_room_state ON asks (room, state, seq, line);

CREATE TABLE runs (
	room   TEXT    NOT NULL REFERENCES rooms (name),
	id     TEXT    NOT NULL,
	commit_sha TEXT NOT NULL DEFAULT '',
	passed INTEGER NOT NULL,
	failed INTEGER NOT NULL,
	seat   TEXT    NOT NULL,
	time   INTEGER NOT NULL,
	PRIMARY KEY (room, id)
) STRICT;

CREATE TABLE stats (
	room  TEXT    NOT NULL REFERENCES rooms (name),
	seat  TEXT    NOT NULL,
	key   TEXT    NOT NULL,
	value INTEGER NOT NULL,
	PRIMARY KEY (room, seat, key)
) STRICT;
