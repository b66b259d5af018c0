package servertest

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	phttp "github.com/parleyhq/parley/http"
	"github.com/parleyhq/parley/internal/metrics"
	"github.com/parleyhq/parley/postgres"
	"github.com/parleyhq/parley/room"
	"github.com/parleyhq/parley/sqlite"
)

// InProcessOptions configure InProcess.
type InProcessOptions struct {
	DBPath      string        // SQLite file; "" = a new one in tb.TempDir()
	PostgresDSN string        // when set, the store is PostgreSQL at this DSN instead of SQLite
	GitRepo     string        // for `ev commit` checks
	ReadTimeout time.Duration // 0 = the server's own; a test of slow clients shortens it
	Logger      *slog.Logger  // nil = discard
}

// InProcess serves the real room service over a real SQLite file (or PostgreSQL database) with the same handler and
// http.Server limits as `parley serve`, on 127.0.0.1:0 in this process. It differs from the
// binary only where the options say so, which is what lets a test wait out a read timeout in
// a second instead of a minute.
func InProcess(tb testing.TB, opts InProcessOptions) *Server {
	tb.Helper()
	if opts.DBPath == "" {
		opts.DBPath = filepath.Join(tb.TempDir(), "parley.db")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	var store parley.Store
	var err error
	if opts.PostgresDSN != "" {
		store, err = postgres.Open(context.Background(), opts.PostgresDSN)
	} else {
		store, err = sqlite.Open(context.Background(), opts.DBPath)
	}
	if err != nil {
		tb.Fatal(err)
	}
	admin := NewToken()
	reg := metrics.New()
	svc, err := room.New(store, room.Config{AdminToken: admin, GitRepo: opts.GitRepo, Logger: log, Observer: reg})
	if err != nil {
		store.Close()
		tb.Fatal(err)
	}
	h := phttp.NewServer(svc, phttp.WithLogger(log), phttp.WithRenderer(room.Renderer{}), phttp.WithMetrics(reg))
	srv := phttp.NewHTTPServer("127.0.0.1:0", h, log)
	srv.RegisterOnShutdown(h.CloseStreams)
	if opts.ReadTimeout > 0 {
		srv.ReadTimeout = opts.ReadTimeout
		srv.ReadHeaderTimeout = min(srv.ReadHeaderTimeout, opts.ReadTimeout)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		store.Close()
		tb.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	s := &Server{Name: "in-process", URL: "http://" + ln.Addr().String(), Admin: admin, stdout: &Buffer{}, stderr: &Buffer{}}
	stopped := false
	s.stop = func() {
		if stopped {
			return
		}
		stopped = true
		srv.Close()
		if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
			tb.Errorf("in-process server: %v", err)
		}
		store.Close()
	}
	tb.Cleanup(s.stop)
	return s
}
