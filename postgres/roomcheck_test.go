package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/pgtest"
	"github.com/parleyhq/parley/storetest"
)

// TestMessagesHaveRooms stands in for the messages' foreign key to rooms, which migration 0009
// drops: two stores on one database append to rooms that exist and to one that does not, at
// once, and import a room; the appends to the missing room are refused with ENOTFOUND, and
// afterwards every stored message belongs to a room (counted by PostgreSQL, not by the stores),
// while the foreign key is indeed gone (the lookup it made for every message is the point).
func TestMessagesHaveRooms(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, b := MustOpen(t, dsn), MustOpen(t, dsn)
	for _, r := range []string{"r1", "r2"} {
		storetest.MustCreateRoom(t, a, r)
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 8 {
		s := a
		if w%2 == 1 {
			s = b
		}
		room := []string{"r1", "r2", "nosuch", "r1"}[w%4]
		wg.Go(func() {
			for i := range 25 {
				m := &parley.Message{Room: room, Seat: fmt.Sprintf("s%d", w), Time: time.Now().UTC(), Format: "text",
					Body: fmt.Sprintf("message %d of %d", i, w)}
				_, err := s.Append(ctx, &parley.Append{Message: m})
				switch {
				case room == "nosuch" && parley.ErrorCode(err) != parley.ENOTFOUND:
					t.Errorf("append to a missing room: %v, want ENOTFOUND", err)
					return
				case room != "nosuch" && err != nil:
					t.Errorf("append to %s: %v", room, err)
					return
				}
			}
		})
	}
	wg.Wait()
	arch := &parley.RoomArchive{Room: &parley.Room{Name: "imported", Policy: parley.DefaultPolicy(), CreatedAt: time.Now().UTC()},
		Messages: []*parley.Message{{Room: "imported", Seq: 1, Seat: "x", Time: time.Now().UTC(), Format: "text", Body: "hello"}}}
	if err := b.ImportRoom(ctx, arch); err != nil {
		t.Fatalf("import: %v", err)
	}
	db, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	var stored, orphans, fks int
	if err := db.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM rooms r WHERE r.name = m.room))
		FROM messages m`).Scan(&stored, &orphans); err != nil {
		t.Fatal(err)
	}
	if want := 6*25 + 1; stored != want || orphans != 0 {
		t.Errorf("%d messages stored, %d of them without a room; want %d and none", stored, orphans, want)
	}
	if err := db.QueryRow(ctx, `SELECT count(*) FROM pg_constraint
		WHERE conrelid = 'messages'::regclass AND confrelid = 'rooms'::regclass AND contype = 'f'`).Scan(&fks); err != nil {
		t.Fatal(err)
	}
	if fks != 0 {
		t.Errorf("messages still has %d foreign keys to rooms", fks)
	}
}
