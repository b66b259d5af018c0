package postgres_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"testing"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/pgtest"
	"github.com/parleyhq/parley/room"
)

// TestPageCacheAcrossServers runs two room services on one database, as two `parley serve`
// processes: full pages one of them cached stay right whatever the other appends, and a page
// that reached the end of the room when read shows the other's appends on the next read.
func TestPageCacheAcrossServers(t *testing.T) {
	dsn := pgtest.DSN(t)
	const admin = "admin-token-for-page-cache-0001"
	svcs := make([]*room.Service, 2)
	for i := range svcs {
		svc, err := room.New(MustOpen(t, dsn), room.Config{AdminToken: admin, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		svcs[i] = svc
	}
	a, b := svcs[0], svcs[1]
	ctx := t.Context()
	adm, err := a.Authenticate(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	p := parley.DefaultPolicy()
	p.SeatMessagesPerMinute, p.SeatBurst = 1e6, 1000
	if _, err := a.CreateRoom(ctx, adm, "r", &p); err != nil {
		t.Fatal(err)
	}
	_, tok, err := a.AddSeat(ctx, adm, "r", "w", parley.RoleAgent)
	if err != nil {
		t.Fatal(err)
	}
	post := func(svc *room.Service, from, to int) {
		t.Helper()
		c, err := svc.Authenticate(ctx, tok)
		if err != nil {
			t.Fatal(err)
		}
		for i := from; i < to; i++ {
			if _, err := svc.Post(ctx, c, "r", fmt.Appendf(nil, "v1 note r to all n=1\nfact %d\n", i), ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	page := func(svc *room.Service, after int64, limit int) *parley.HistoryPage {
		t.Helper()
		p, err := svc.HistoryPage(ctx, adm, "r", after, limit)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	text := func(p *parley.HistoryPage) []byte {
		t.Helper()
		var buf bytes.Buffer
		if err := p.Stream(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	post(a, 0, 8)
	full := text(page(a, 0, 5)) // cached by a
	tail := page(a, 5, 5)       // messages 6..8: not full, not cached
	if tail.Full || tail.Last != 8 {
		t.Fatalf("tail %+v", tail)
	}
	text(tail)
	post(b, 8, 15) // the other server appends
	if again := text(page(a, 0, 5)); !bytes.Equal(again, full) || !bytes.Equal(again, text(page(b, 0, 5))) {
		t.Error("a cached full page differs from the page the other server reads")
	}
	grown := page(a, 5, 5)
	if !grown.Full || grown.Last != 10 || !bytes.Equal(text(grown), text(page(b, 5, 5))) {
		t.Errorf("the page that reached the end did not grow with the other server's appends: %+v", grown)
	}
}
