package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/sqlite"
	"github.com/parleyhq/parley/storetest"
)

// TestNewerSchema checks that a database migrated by a newer parley is refused, not misread.
func TestNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'migrations/0999_future.sql', 0)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err = sqlite.Open(t.Context(), path)
	if err == nil {
		s.Close()
		t.Fatal("Open accepted a database with a newer schema")
	}
	if !strings.Contains(err.Error(), "version 999, newer than this parley knows") {
		t.Fatalf("Open: %v, want the newer-schema error", err)
	}
}

// TestSeatIndexesMigration checks that a database from before migrations 0007 and 0008 (with
// the indexes on (room, seat, seq) and (room, seat, hash, seq)) has, once opened, no index on
// messages keyed by seat but seat_index, holding an entry for each message it holds, with
// seat_indexed at the last; and that dedup finds them, by hash and by count.
func TestSeatIndexesMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	storetest.MustCreateRoom(t, s, "r")
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	msg := func(body string) *parley.Message {
		return &parley.Message{Room: "r", Seat: "a", Time: t0, Format: parley.FormatText, Body: body, Hash: []byte(body)}
	}
	for _, body := range []string{"x", "y", "z"} {
		storetest.MustAppend(t, s, &parley.Append{Message: msg(body)})
	}
	s.Close()

	// The database as version 6 left it: the index there, 0007 not applied.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	indexes := func() string {
		t.Helper()
		rows, err := db.Query(`SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'messages' AND name LIKE 'messages_seat%' ORDER BY name`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var names []string
		for rows.Next() {
			var n string
			rows.Scan(&n)
			names = append(names, n)
		}
		return strings.Join(names, " ")
	}
	entries := func() (n, indexed int) {
		t.Helper()
		if err := db.QueryRow(`SELECT (SELECT count(*) FROM seat_index WHERE room = 'r' AND seat = 'a'),
			coalesce((SELECT seq FROM seat_indexed WHERE room = 'r'), 0)`).Scan(&n, &indexed); err != nil {
			t.Fatal(err)
		}
		return n, indexed
	}
	if got := indexes(); got != "" {
		t.Fatalf("a new database has the seat indexes %q, want none", got)
	}
	if _, err := db.Exec(`DROP TABLE seat_index; DROP TABLE seat_indexed;
		CREATE INDEX messages_seat_hash ON messages (room, seat, hash, seq);
		CREATE INDEX messages_seat_seq ON messages (room, seat, seq);
		DELETE FROM schema_migrations WHERE version >= 7`); err != nil {
		t.Fatal(err)
	}
	if got := indexes(); got != "messages_seat_hash messages_seat_seq" {
		t.Fatalf("the old database has the seat indexes %q", got)
	}
	db.Close()

	s, err = sqlite.Open(t.Context(), path, sqlite.Sole())
	if err != nil {
		t.Fatalf("open the old database: %v", err)
	}
	defer s.Close()
	db, err = sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := indexes(); got != "" {
		t.Fatalf("after the upgrade the seat indexes are %q, want none", got)
	}
	// seat_index holds every message, and the database is whole.
	if n, indexed := entries(); n != 3 || indexed != 3 {
		t.Fatalf("seat_index holds %d of a's 3 messages, up to #%d; want 3, up to #3", n, indexed)
	}
	var check string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q, %v", check, err)
	}
	var applied int
	if err := db.QueryRow(`SELECT count(*) FROM schema_migrations WHERE version = 7 AND name = 'migrations/0007_seat_indexes.sql'
		OR version = 8 AND name = 'migrations/0008_seat_index_table.sql'`).Scan(&applied); err != nil || applied != 2 {
		t.Fatalf("migrations 0007 and 0008 recorded %d times, want once each, %v", applied, err)
	}
	if msgs, err := s.Messages(t.Context(), "r", 0, 0); err != nil || len(msgs) != 3 {
		t.Fatalf("after the upgrade: %d messages, %v; want the 3 stored", len(msgs), err)
	}
	// x is #1, two of a's messages back: among its last 3, not its last 2.
	if _, err := s.Append(t.Context(), &parley.Append{Message: msg("x"), DedupLast: 3}); parley.ErrorCode(err) != parley.ECONFLICT {
		t.Fatalf("a repeat of #1 among the last 3: %v, want a conflict", err)
	}
	if res, err := s.Append(t.Context(), &parley.Append{Message: msg("x"), DedupLast: 2}); err != nil || res.Seq != 4 {
		t.Fatalf("x, not among the last 2: #%d, %v; want stored as #4", res.Seq, err)
	}
}
