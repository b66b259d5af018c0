package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/pgtest"
	"github.com/parleyhq/parley/storetest"
)

// TestWordsAsGenerated: every way a message reaches the table (an append of a body that is
// UTF-8, one with a NUL, one that is not UTF-8, several in one group commit, an import, a body
// changed in place) leaves its words exactly what 0004's generated column computed,
// to_tsvector('simple', parley_body_text(body)), which the query below evaluates afresh.
func TestWordsAsGenerated(t *testing.T) {
	dsn := pgtest.DSN(t)
	s := MustOpen(t, dsn)
	ctx := t.Context()
	storetest.MustCreateRoom(t, s, "r")
	storetest.MustCreateSeat(t, s, "r", "alice")
	bodies := []string{"v1 note redis window 42", "café 😀 日本 Straße", "a\x00b word", "\xffbad \xc0\xaf bytes ok",
		"", "MiXeD case, punctuation; and-hyphens"}
	for i, b := range bodies {
		m := &parley.Message{Room: "r", Seat: "alice", Time: time.Now(), Format: "text", Body: b}
		if _, err := s.Append(ctx, &parley.Append{Message: m}); err != nil {
			t.Fatalf("append %d %q: %v", i, b, err)
		}
	}
	// Appends waiting at once share a group commit.
	errs := make(chan error, len(bodies))
	for i, b := range bodies {
		go func() {
			m := &parley.Message{Room: "r", Seat: "alice", Time: time.Now(), Format: "text", Body: b + " again"}
			_, err := s.Append(context.Background(), &parley.Append{Message: m})
			if err != nil {
				err = parley.Errorf(parley.EINTERNAL, "append %d: %v", i, err)
			}
			errs <- err
		}()
	}
	for range bodies {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	arch := &parley.RoomArchive{Room: &parley.Room{Name: "imported", CreatedAt: time.Now().UTC()}}
	for i, b := range bodies {
		arch.Messages = append(arch.Messages, &parley.Message{Room: "imported", Seq: int64(i + 1), Seat: "bob",
			Time: time.Now().UTC(), Format: "text", Body: b + " imported"})
	}
	if err := s.ImportRoom(ctx, arch); err != nil {
		t.Fatalf("import: %v", err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `UPDATE messages SET body = convert_to('changed words', 'UTF8') WHERE room = 'r' AND seq = 1`); err != nil {
		t.Fatal(err)
	}
	var total, wrong, nulls int
	var sample string
	if err := conn.QueryRow(ctx, `SELECT count(*),
		count(*) FILTER (WHERE words IS DISTINCT FROM to_tsvector('simple', parley_body_text(body))),
		count(*) FILTER (WHERE hash IS NULL AND idempotency_key IS NULL),
		coalesce((SELECT words::text FROM messages WHERE room = 'r' AND seq = 1), '')
		FROM messages`).Scan(&total, &wrong, &nulls, &sample); err != nil {
		t.Fatal(err)
	}
	if want := 3 * len(bodies); total != want || wrong != 0 {
		t.Errorf("%d messages, %d of them with words other than their body's; want %d, none", total, wrong, want)
	}
	// No hash and no key are stored as NULL, whichever INSERT wrote them (an empty key would
	// collide in the unique index; an empty hash would be a hash).
	if nulls != total {
		t.Errorf("%d of %d messages have a NULL hash and key", nulls, total)
	}
	if sample != "'changed':1 'words':2" {
		t.Errorf("after its body changed, message 1 has words %s", sample)
	}
}
