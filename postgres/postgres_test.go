package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/pgtest"
	"github.com/parleyhq/parley/postgres"
	"github.com/parleyhq/parley/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// MustOpen opens a store on dsn and closes it with tb.Cleanup.
func MustOpen(tb testing.TB, dsn string) *postgres.Store {
	tb.Helper()
	s, err := postgres.Open(context.Background(), dsn, postgres.WithLogger(slog.New(slog.NewTextHandler(tbWriter{tb}, nil))))
	if err != nil {
		tb.Fatalf("open: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("close: %v", err)
		}
	})
	return s
}

// tbWriter sends a store's log to the test's log, shown only when the test fails or with -v.
type tbWriter struct{ tb testing.TB }

func (w tbWriter) Write(p []byte) (int, error) {
	w.tb.Logf("%s", bytes.TrimRight(p, "\n"))
	return len(p), nil
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) parley.Store { return MustOpen(t, pgtest.DSN(t)) })
}

// TestShared runs two Stores on one database, as two server processes.
func TestShared(t *testing.T) {
	storetest.RunShared(t, func(t *testing.T) (parley.Store, parley.Store) {
		dsn := pgtest.DSN(t)
		return MustOpen(t, dsn), MustOpen(t, dsn)
	}, true)
}

// TestConcurrentOpen starts several stores on a new database at once: the advisory lock lets
// one of them migrate and the others find the schema in place.
func TestConcurrentOpen(t *testing.T) {
	dsn := pgtest.DSN(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			s, err := postgres.Open(t.Context(), dsn)
			if err == nil {
				err = s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
	}
	conn := mustConnect(t, dsn)
	var n int
	files, _ := filepath.Glob("migrations/*.sql")
	if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != len(files) || n == 0 {
		t.Fatalf("schema_migrations rows = %d, %v, want one per migration file (%d)", n, err, len(files))
	}
}

// TestNewerSchema checks that a database migrated by a newer parley is refused, not misread.
func TestNewerSchema(t *testing.T) {
	dsn := pgtest.DSN(t)
	MustOpen(t, dsn)
	conn := mustConnect(t, dsn)
	if _, err := conn.Exec(t.Context(), `INSERT INTO schema_migrations (version, name) VALUES (999, 'migrations/0999_future.sql')`); err != nil {
		t.Fatal(err)
	}
	s, err := postgres.Open(t.Context(), dsn)
	if err == nil {
		s.Close()
		t.Fatal("Open accepted a database with a newer schema")
	}
	if !strings.Contains(err.Error(), "version 999, newer than this parley knows") {
		t.Fatalf("Open: %v, want the newer-schema error", err)
	}
}

func mustConnect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// TestListenerReconnect kills a store's listening connection: the store reconnects and wakes
// its watchers with what was appended meanwhile, whose notification it missed, and tells its
// seat watchers to check every seat, since a revocation's notice may be lost too.
func TestListenerReconnect(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, b := MustOpen(t, dsn), MustOpen(t, dsn)
	storetest.MustCreateRoom(t, a, "limiter")
	ch := a.Watch(t.Context(), "limiter")
	seats := a.WatchSeats(t.Context())
	conn := mustConnect(t, dsn)

	for i := range 3 {
		var killed int
		if err := conn.QueryRow(t.Context(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE datname = current_database() AND query = 'LISTEN parley_append' AND pid <> pg_backend_pid()`).Scan(&killed); err != nil {
			t.Fatalf("terminate listeners: %v", err)
		}
		if killed == 0 {
			t.Fatalf("round %d: no listening connection found to terminate", i)
		}
		m := storetest.MustAppend(t, b, &parley.Append{Message: &parley.Message{Room: "limiter", Seat: "bob", Format: parley.FormatText, Body: fmt.Sprintf("while down %d", i)}})
		waitFor(t, ch, m.Seq)
		select {
		case c := <-seats:
			if c != (parley.SeatChange{}) {
				t.Fatalf("round %d: seat watch got %+v after a reconnect, want the zero change", i, c)
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("round %d: no \"check every seat\" after the listener reconnected", i)
		}
		// Let both stores finish reconnecting before the next round, so that it kills both.
		waitListeners(t, conn, 2)
	}
}

// TestListenerPing makes the listener ping often, and checks that notifications still arrive,
// also those that come in while it pings.
func TestListenerPing(t *testing.T) {
	defer postgres.SetListenPing(time.Millisecond)()
	dsn := pgtest.DSN(t)
	a, b := MustOpen(t, dsn), MustOpen(t, dsn)
	storetest.MustCreateRoom(t, a, "limiter")
	ch := a.Watch(t.Context(), "limiter")
	for i := range 20 {
		m := storetest.MustAppend(t, b, &parley.Append{Message: &parley.Message{Room: "limiter", Seat: "bob", Format: parley.FormatText, Body: fmt.Sprintf("ping %d", i)}})
		waitFor(t, ch, m.Seq)
		time.Sleep(3 * time.Millisecond)
	}
}

func waitListeners(t *testing.T, conn *pgx.Conn, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var got int
		if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND query = 'LISTEN parley_append'`).Scan(&got); err != nil {
			t.Fatalf("count listeners: %v", err)
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d listening connections after 10s, want %d", got, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitFor(t *testing.T, ch <-chan int64, want int64) {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case got, ok := <-ch:
			if !ok {
				t.Fatalf("watch closed, waiting for %d", want)
			}
			if got >= want {
				return
			}
		case <-timeout:
			t.Fatalf("watch: no %d within 15s", want)
		}
	}
}

func BenchmarkAppend(b *testing.B)   { storetest.BenchAppend(b, MustOpen(b, pgtest.DSN(b))) }
func BenchmarkMessages(b *testing.B) { storetest.BenchMessages(b, MustOpen(b, pgtest.DSN(b))) }

func BenchmarkAppendParallel(b *testing.B) {
	storetest.BenchAppendParallel(b, MustOpen(b, pgtest.DSN(b)))
}
