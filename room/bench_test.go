package room_test

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/room"
	"github.com/parleyhq/parley/sqlite"
)

// benchPolicy lifts the rate caps out of the way of a benchmark.
var benchPolicy = &parley.Policy{SeatMessagesPerMinute: 1e9, SeatBurst: 1 << 30, SeatTokensPerMinute: 1 << 30,
	RoomMessagesPerMinute: 1e9, RoomBurst: 1 << 30}

// BenchmarkPost measures the whole pipeline on SQLite (WAL, synchronous=FULL): parse, dedup
// lookup, rate caps, secret scan, one evidence-free append with an ask.
func BenchmarkPost(b *testing.B) {
	f := MustFixture(b, "")
	f.MustRoom("r", benchPolicy, "lead", "builder", "yu")
	p3 := readFixture(b, "p3.txt")
	b.ReportAllocs()
	b.SetBytes(int64(len(p3)))
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		f.Clock.Advance(time.Millisecond)
		body := fmt.Sprintf("%smeasure %d\n", p3[:len(p3)-len("approvals none beyond the decider\n")], i)
		if _, err := f.Post("r/builder", body, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHistory measures a full read of a 100-message room, as a seat (so the read is
// tokenized and counted for stats).
func BenchmarkHistory(b *testing.B) {
	f := MustFixture(b, "")
	f.MustRoom("r", benchPolicy, "lead", "builder", "yu")
	p2 := readFixture(b, "p2.txt")
	for i := range 100 {
		f.MustPost("r/builder", fmt.Sprintf("%seta %d\n", p2[:len(p2)-len("eta mock lands→2h to finish, p=0.7\n")], i))
	}
	full := f.History("r/lead", 0)
	for _, who := range []string{"seat", "admin"} {
		// A seat's read is tokenized and counted in stats; the admin's is rendering alone.
		c := f.Seats["r/lead"]
		if who == "admin" {
			c = f.Admin
		}
		b.Run(who, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(full)))
			for b.Loop() {
				if _, _, err := f.Svc.History(b.Context(), c, "r", 0, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPostLoad measures the pipeline on the post `parley bench server` sends (loadbench's
// loadPostTo: a report with a done, a run cited as its evidence and a todo), in a room of 20
// seats on a store opened as `parley serve` opens its own (sqlite.Sole), as one seat after
// authenticating its token, as the HTTP edge does on every request.
func BenchmarkPostLoad(b *testing.B) {
	st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "db"), sqlite.Sole())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	svc, err := room.New(st, room.Config{AdminToken: adminToken, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	admin, err := svc.Authenticate(b.Context(), adminToken)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := svc.CreateRoom(b.Context(), admin, "r", benchPolicy); err != nil {
		b.Fatal(err)
	}
	var tok string
	for i := range 20 {
		_, t, err := svc.AddSeat(b.Context(), admin, "r", fmt.Sprintf("s%02d", i), parley.RoleAgent)
		if err != nil {
			b.Fatal(err)
		}
		if i == 2 {
			tok = t
		}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		body := fmt.Appendf(nil, "v1 report load to s03 n=4\noutcome batch %d of s02 finished\ndone#1 parsed the input and wrote the summary\nev#1 run load-%d\ntodo next batch after review\n", i, i)
		c, err := svc.Authenticate(b.Context(), tok)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := svc.Post(b.Context(), c, "r", body, ""); err != nil {
			b.Fatal(err)
		}
	}
}
