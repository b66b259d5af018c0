package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley"
)

// benchBody is a typical convention report of about 300 bytes.
var benchBody = "v1 report limiter to alice,bob re 12 n=6\n" +
	"done#1 token bucket per seat, refill 30/min, burst 10\n" +
	"ev#1 commit 3f9a2c1 on feat/rate-limit\n" +
	"claim p99 post latency unchanged under load\n" +
	"todo room-level cap and its Retry-After header\n" +
	"risk clock skew between instances; mit server time only\n" +
	"ask bob which burst for runners? by 20260919T1200Z\n"

// BenchAppend measures Append of a typical post with dedup on (window and last 500), as the
// server appends every post.
func BenchAppend(b *testing.B, s parley.Store) {
	ctx := context.Background()
	MustCreateRoom(b, s, "bench")
	b.ReportAllocs()
	b.SetBytes(int64(len(benchBody) + 10))
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		body := benchBody + fmt.Sprintf("nonce %d\n", i)
		if _, err := s.Append(ctx, &parley.Append{
			Message:    msg("bench", "alice", body),
			DedupSince: t0.Add(-24 * time.Hour), DedupLast: 500,
		}); err != nil {
			b.Fatalf("append: %v", err)
		}
	}
}

// BenchMessages measures reading a page of 100 messages from a room of 1000, as a reader
// catching up with after=<seq>.
func BenchMessages(b *testing.B, s parley.Store) {
	ctx := context.Background()
	MustCreateRoom(b, s, "bench")
	const total, page = 1000, 100
	for i := range total {
		if _, err := s.Append(ctx, &parley.Append{Message: msg("bench", "alice", benchBody+fmt.Sprintf("nonce %d\n", i))}); err != nil {
			b.Fatalf("append: %v", err)
		}
	}
	b.ReportAllocs()
	b.SetBytes(int64(page * len(benchBody)))
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		after := int64(i*page) % (total - page)
		msgs, err := s.Messages(ctx, "bench", after, page)
		if err != nil {
			b.Fatalf("messages: %v", err)
		}
		if len(msgs) != page || !strings.HasPrefix(msgs[0].Body, "v1 report") {
			b.Fatalf("messages: got %d", len(msgs))
		}
	}
}

// BenchAppendParallel measures Append from many goroutines at once (b.SetParallelism(8) per
// GOMAXPROCS), each its own seat, into one room: the load of a busy room, where appends
// contend for the room's seq.
func BenchAppendParallel(b *testing.B, s parley.Store) {
	ctx := context.Background()
	MustCreateRoom(b, s, "bench")
	b.ReportAllocs()
	b.SetParallelism(8)
	var seats atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		seat := fmt.Sprintf("s%d", seats.Add(1))
		for i := 0; pb.Next(); i++ {
			body := benchBody + fmt.Sprintf("nonce %d\n", i)
			if _, err := s.Append(ctx, &parley.Append{
				Message:    msg("bench", seat, body),
				DedupSince: t0.Add(-24 * time.Hour), DedupLast: 500,
			}); err != nil {
				b.Errorf("append: %v", err)
				return
			}
		}
	})
}
