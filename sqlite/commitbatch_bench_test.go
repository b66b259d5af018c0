package sqlite

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/sqlstore"
)

// BenchmarkCommitBatch measures what the committer spends per append when the batches have a
// set size, the committer stopped and the batches run by the benchmark itself: the serial part
// of a post, without the scheduling that decides a server's batch sizes. Each append is from a
// different seat (as at once from the bench's seats), with a body of about 250 bytes of words
// and the service's dedup window and count. user-µs/post and sys-µs/post are the process's
// CPU time per append; wal-frames/post the pages written to the WAL per append (a page and a
// 24-byte header each, two pwrite calls), which are most of the system time.
func BenchmarkCommitBatch(b *testing.B) {
	for _, size := range []int{1, 7, 20} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) { benchCommitBatch(b, size) })
	}
}

func benchCommitBatch(b *testing.B, size int) {
	path := filepath.Join(b.TempDir(), "parley.db")
	s, err := Open(context.Background(), path, Sole())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	t0 := time.Now()
	if err := s.CreateRoom(context.Background(), &parley.Room{Name: "bench", Policy: parley.DefaultPolicy(), CreatedAt: t0}); err != nil {
		b.Fatal(err)
	}
	words := strings.Fields("limiter tokens bucket refill burst window seat room ask answer review commit evidence test " +
		"latency throughput durable group fsync index search topic decision state summary plan risk")
	body := func(n int) string {
		var sb strings.Builder
		fmt.Fprintf(&sb, "v1 note m%d to all n=0\n", n)
		for i := 0; sb.Len() < 250; i++ {
			sb.WriteString(words[(n*7+i*13)%len(words)])
			sb.WriteByte(' ')
		}
		return sb.String()
	}
	s.stopCommitter()
	defer s.startCommitter()
	// Nor any copy of the checkpointer, which would let the WAL start again.
	if err := s.stopCheckpointer(); err != nil {
		b.Fatal(err)
	}
	s.ckpt = nil
	// No checkpoint during the run, so that the WAL's growth counts the pages the batches
	// wrote (wal-frames/post: the same on any machine, unlike the times).
	if _, err := s.write.Exec("PRAGMA wal_autocheckpoint = 0"); err != nil {
		b.Fatal(err)
	}
	var pageSize int64
	if err := s.write.QueryRow("PRAGMA page_size").Scan(&pageSize); err != nil {
		b.Fatal(err)
	}
	wal0 := walSize(b, path)
	outs := make([]parley.Appended, size)
	ops := make([]*txOp, size)
	ctx := context.Background()
	// The batches run on this goroutine, held on its thread, whose CPU time is then the
	// committer's own (serial-µs/post): what bounds posts per second, apart from work that
	// runs beside it (the indexer, the checkpointer) and that the process's times include.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	user0, sys0 := benchCPU()
	thread0 := threadCPU()
	posted := 0
	for posted < b.N {
		for i := range ops {
			bd := body(posted + i)
			h := sha256.Sum256([]byte(bd))
			a := &parley.Append{Message: &parley.Message{Room: "bench", Seat: fmt.Sprintf("seat%02d", i), Time: time.Now(),
				Format: parley.FormatConvention, Intent: "note", Body: bd, Hash: h[:]},
				DedupSince: time.Now().Add(-10 * time.Minute), DedupLast: 500}
			m, err := sqlstore.Prepare(a)
			if err != nil {
				b.Fatal(err)
			}
			ops[i] = &txOp{ctx: ctx, run: s.appendOp(a, m, "[]", &outs[i]), done: make(chan struct{})}
		}
		s.commitBatch(ops, time.Now())
		for _, o := range ops {
			if o.err != nil {
				b.Fatal(o.err)
			}
		}
		posted += size
	}
	thread := threadCPU()
	b.StopTimer()
	user, sys := benchCPU()
	b.ReportMetric(float64((thread-thread0).Microseconds())/float64(posted), "serial-µs/post")
	b.ReportMetric(float64(walSize(b, path)-wal0)/float64(pageSize+24)/float64(posted), "wal-frames/post")
	b.ReportMetric(float64((user-user0).Microseconds())/float64(posted), "user-µs/post")
	b.ReportMetric(float64((sys-sys0).Microseconds())/float64(posted), "sys-µs/post")
}

// walSize is the size of the database's WAL file.
func walSize(b *testing.B, path string) int64 {
	st, err := os.Stat(path + "-wal")
	if err != nil {
		b.Fatal(err)
	}
	return st.Size()
}

// benchCPU is the CPU time the process has used, user and system apart: the system time
// (fsync, the WAL's writes) varies with the disk and the machine's load far more.
func benchCPU() (user, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// threadCPU is the CPU time of the calling thread (user and system).
func threadCPU() time.Duration {
	var ts syscall.Timespec
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
	if _, _, e := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}
