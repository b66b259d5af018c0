package loadbench

import (
	"context"
	"log/slog"
	"math"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	phttp "github.com/parleyhq/parley/http"
	"github.com/parleyhq/parley/room"
	"github.com/parleyhq/parley/sqlite"
)

// keptOpen is a store whose Close leaves it open, for the server that shares it.
type keptOpen struct{ parley.Store }

func (keptOpen) Close() error { return nil }

// TestRunOpensStoreAfterPosting runs the bench against a server apart (as with --instances)
// and checks that it opens its own store only once every post was acknowledged, and that the
// seq check and the state rooms then run on it.
func TestRunOpensStoreAfterPosting(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "apart.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	log := slog.New(slog.DiscardHandler)
	const admin = "admin-token-of-the-server-apart"
	svc, err := room.New(st, room.Config{AdminToken: admin, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	var created atomic.Int64 // posts the server acknowledged
	h := phttp.NewServer(svc, phttp.WithLogger(log))
	counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		if r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/messages") && sw.status == http.StatusCreated {
			created.Add(1)
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := phttp.NewHTTPServer("127.0.0.1:0", counted, log)
	go srv.Serve(ln)
	defer srv.Close()

	const messages = 90
	opened := int64(-1)
	res, err := Run(ctx, Config{
		StoreKey: "sqlite", Seats: 3, Messages: messages, StateMessages: 500, Reads: 1,
		Servers: []string{"http://" + ln.Addr().String()}, AdminToken: admin,
		OpenStore: func(context.Context) (parley.Store, error) {
			opened = created.Load()
			return keptOpen{st}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if opened != messages {
		t.Errorf("the store was opened after %d acknowledged posts, want all %d", opened, messages)
	}
	if res.SeqCheck != "ok" || res.Errors != 0 || res.StateRoomMessages != 500 || res.StateMSLargeRoom <= 0 {
		t.Errorf("seq check %q, %d errors, state room %d (%.2f ms)", res.SeqCheck, res.Errors, res.StateRoomMessages, res.StateMSLargeRoom)
	}
	if res.Memory.ClientCPUMicrosPerPost <= 0 {
		t.Errorf("the client's CPU per post is %.1f µs", res.Memory.ClientCPUMicrosPerPost)
	}
	// Without a store or a way to open one, Run refuses to start.
	if _, err := Run(ctx, Config{Servers: []string{"http://" + ln.Addr().String()}, AdminToken: admin}); err == nil || !strings.Contains(err.Error(), "no store") {
		t.Errorf("no store: %v", err)
	}
}

// statusWriter notes the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// TestCommitterUse works the committer's figures out of hand-set stats: 10 writes in 4
// commits over 10 ms of posting, 8 ms of it busy, 6 ms of that in COMMIT.
func TestCommitterUse(t *testing.T) {
	got := committerUse(parley.CommitStats{Commits: 4, Writes: 10, Busy: 8 * time.Millisecond, Commit: 6 * time.Millisecond}, 10*time.Millisecond)
	want := Committer{Commits: 4, PostsPerCommit: 2.5, BusyShare: 0.8, CommitShare: 0.75, CommitMS: 1.5}
	if math.Abs(got.PostsPerCommit-want.PostsPerCommit)+math.Abs(got.BusyShare-want.BusyShare)+
		math.Abs(got.CommitShare-want.CommitShare)+math.Abs(got.CommitMS-want.CommitMS) > 1e-12 || got.Commits != want.Commits {
		t.Errorf("committerUse = %+v, want %+v", *got, want)
	}
	// Nothing committed, no time: zeros, not NaN.
	if z := committerUse(parley.CommitStats{}, 0); *z != (Committer{}) {
		t.Errorf("committerUse of nothing = %+v", *z)
	}
}
