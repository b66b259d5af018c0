package loadbench

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/parleyhq/parley"
	phttp "github.com/parleyhq/parley/http"
)

// benchAnswer is the server's answer to a bench post (the note is about its evidence line).
const benchAnswer = `{"seq":12345,"tokens":46,"notes":["! ev#1 unverified: run load-12345 not found; a runner seat must post it first"],"warnings":[]}` + "\n"

// BenchmarkAnswerSeq compares the poster's read of an answer's seq with the two readings it
// stands for, in the same run: checking the whole answer with json.Valid (what the poster did
// before, after reading the leading seq) and decoding it as client.Client does.
func BenchmarkAnswerSeq(b *testing.B) {
	body := []byte(benchAnswer)
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			if seq, err := answerSeq(body); seq != 12345 || err != nil {
				b.Fatal(seq, err)
			}
		}
	})
	b.Run("json.Valid", func(b *testing.B) {
		for b.Loop() {
			if !json.Valid(body) {
				b.Fatal("not valid")
			}
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		for b.Loop() {
			var res parley.PostResult
			if err := json.Unmarshal(body, &res); err != nil || res.Seq != 12345 {
				b.Fatal(res.Seq, err)
			}
		}
	})
}

// BenchmarkPoster is the client's side of the bench alone: 20 posters post the bench's
// messages over loopback to a net/http server that reads each and answers what parley's
// server answers (201, the same head and body), storing nothing. It reports the process's
// CPU per post (client and that minimal server), the figure the client adds to the bench's.
func BenchmarkPoster(b *testing.B) {
	log := slog.New(slog.DiscardHandler)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Location", "/v1/rooms/r/history?after=12344&limit=1")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, benchAnswer)
	})
	srv := phttp.NewHTTPServer("127.0.0.1:0", h, log)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	const seats = 20
	posters := make([]*poster, seats)
	for i := range posters {
		if posters[i], err = newPoster("http://"+ln.Addr().String(), "r", "token-of-the-benchmark"); err != nil {
			b.Fatal(err)
		}
		defer posters[i].Close()
	}
	ctx := context.Background()
	var next atomic.Int64
	b.ReportAllocs()
	cpu0, ok0 := processCPU()
	b.ResetTimer()
	var wg sync.WaitGroup
	for s, p := range posters {
		wg.Go(func() {
			for {
				i := int(next.Add(1))
				if i > b.N {
					return
				}
				p.buf = loadPostTo(p.buf[:0], i, "s00", "s01")
				if seq, err := p.post(ctx, p.buf); seq != 12345 || err != nil {
					b.Errorf("seat %d: seq %d, %v", s, seq, err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if cpu1, ok1 := processCPU(); ok0 && ok1 {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-µs/op")
	}
}
