package sqlite_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/sqlite"
)

func ExampleOpen() {
	dir, err := os.MkdirTemp("", "parley-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(dir, "parley.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	now := time.Date(2026, 9, 19, 12, 0, 0, 0, time.UTC)
	if err := s.CreateRoom(ctx, &parley.Room{Name: "limiter", Policy: parley.DefaultPolicy(), CreatedAt: now}); err != nil {
		log.Fatal(err)
	}
	for _, body := range []string{"v1 note limiter to all n=0", "v1 note limiter to all n=1\nplan token bucket"} {
		m, err := s.Append(ctx, &parley.Append{Message: &parley.Message{
			Room: "limiter", Seat: "alice", Time: now, Format: parley.FormatConvention, Body: body,
		}})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("#%d %s %s\n", m.Seq, m.Seat, m.Time.Format("20060102T1504Z"))
	}
	last, _ := s.LastSeq(ctx, "limiter")
	fmt.Println("last seq", last)
	// Output:
	// #1 alice 20260919T1200Z
	// #2 alice 20260919T1200Z
	// last seq 2
}
