package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/client"
	"github.com/parleyhq/parley/internal/pgtest"
)

// TestCrashSQLite kills a SQLite server mid-load (SIGKILL: no shutdown) and checks, after a
// restart, that every message the server acknowledged is in history, byte for byte, under
// the seq and seat it was acknowledged with, and that seqs are still gapless.
func TestCrashSQLite(t *testing.T) {
	parley(t)
	db := "sqlite:" + filepath.Join(t.TempDir(), "parley.db")
	env := []string{"PARLEY_ADMIN_TOKEN=e2e-admin-token-0123456789abcdef", "PARLEY_DB=" + db}
	crash(t, env)
}

// TestCrashPostgres does the same on PostgreSQL.
func TestCrashPostgres(t *testing.T) {
	parley(t)
	env := []string{"PARLEY_ADMIN_TOKEN=e2e-admin-token-0123456789abcdef", "PARLEY_DB=" + pgtest.DSN(t)}
	crash(t, env)
}

type ack struct {
	seq  int64
	seat string
	body string
}

func crash(t *testing.T, env []string) {
	const admin = "e2e-admin-token-0123456789abcdef"
	s := startServer(t, "serve", env)
	ctx := t.Context()
	if _, err := s.client(t, admin).CreateRoomJSON(ctx, nil, "load", json.RawMessage(`{"seat_messages_per_minute":1e9,"seat_burst":1000000000,
		"seat_tokens_per_minute":1000000000,"room_messages_per_minute":1e9,"room_burst":1000000000}`)); err != nil {
		t.Fatalf("create room: %v", err)
	}
	seats := map[string]string{}
	for _, name := range []string{"w1", "w2", "w3", "w4"} {
		_, tok, err := s.client(t, admin).AddSeat(ctx, nil, "load", name, "agent")
		if err != nil {
			t.Fatalf("add seat %s: %v", name, err)
		}
		seats[name] = tok
	}

	var (
		mu   sync.Mutex
		acks []ack
		wg   sync.WaitGroup
		stop = make(chan struct{})
	)
	hc := &http.Client{Timeout: 10 * time.Second}
	for name, tok := range seats {
		c, err := client.New(s.url, tok, client.WithHTTPClient(hc))
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				body := fmt.Sprintf("v1 note load to all n=1\noutcome %s message %d\n", name, i)
				a, err := c.Post(context.Background(), nil, "load", []byte(body), "")
				var gone *url.Error
				if errors.As(err, &gone) {
					return // the server is gone: a transport error, not a refusal
				}
				if err == nil && !a.Replay {
					mu.Lock()
					acks = append(acks, ack{a.Seq, name, body})
					mu.Unlock()
				}
			}
		}()
	}
	// Let the load build, then pull the plug while posts are in flight.
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		n := len(acks)
		mu.Unlock()
		if n >= 60 {
			break
		}
	}
	s.kill()
	close(stop)
	wg.Wait()
	if len(acks) < 10 {
		t.Fatalf("only %d posts were acknowledged before the kill", len(acks))
	}

	again := startServer(t, "serve (after the kill)", env)
	text, _, err := again.client(t, seats["w1"]).HistoryAll(ctx, nil, "load", 0)
	if err != nil {
		t.Fatalf("history after restart: %v", err)
	}
	seqs, _ := seqsOf(text)
	for i, seq := range seqs {
		if seq != int64(i+1) {
			t.Fatalf("seqs after the crash are not gapless: %v", seqs)
		}
	}
	for _, a := range acks {
		want := fmt.Sprintf("#%d %s ", a.seq, a.seat)
		i := -1
		if bytes.HasPrefix(text, []byte(want)) {
			i = 0
		} else if j := bytes.Index(text, []byte("\n"+want)); j >= 0 {
			i = j + 1
		}
		if i < 0 {
			t.Errorf("acknowledged #%d by %s is lost", a.seq, a.seat)
			continue
		}
		rest := text[i:]
		_, rest, _ = bytes.Cut(rest, []byte("\n"))
		if !bytes.HasPrefix(rest, []byte(a.body)) {
			t.Errorf("acknowledged #%d by %s has a different body:\n%.200s", a.seq, a.seat, rest)
		}
	}
	t.Logf("%d acknowledged posts, %d messages after the restart", len(acks), len(seqs))

	// The restarted server takes posts where the other left off.
	a, err := again.client(t, seats["w2"]).Post(ctx, nil, "load", []byte("v1 note load to all n=1\noutcome back after the crash\n"), "")
	if err != nil || a.Replay || a.Seq != int64(len(seqs)+1) {
		t.Errorf("post after the restart: %+v, %v; want seq %d", a, err, len(seqs)+1)
	}
}
