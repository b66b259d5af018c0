package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	phttp "github.com/parleyhq/parley/http"
	"github.com/parleyhq/parley/internal/mock"
)

// runClient runs one parley command against url with a seat token and returns its exit code,
// stdout and stderr.
func runClient(t *testing.T, url, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errOut, getenv: func(k string) string {
		return map[string]string{"PARLEY_URL": url, "PARLEY_TOKEN": "team.builder"}[k]
	}}
	code := dispatch(t.Context(), e, args)
	return code, out.String(), errOut.String()
}

func fakeRoomServer(t *testing.T, svc *mock.RoomService) string {
	t.Helper()
	svc.AuthenticateFn = func(ctx context.Context, token string) (*parley.Caller, error) {
		room, seat, _ := strings.Cut(token, ".")
		return &parley.Caller{Seat: &parley.Seat{Room: room, Name: seat}}, nil
	}
	ts := httptest.NewServer(phttp.NewServer(svc, phttp.WithLogger(slog.New(slog.DiscardHandler))))
	t.Cleanup(ts.Close)
	return ts.URL
}

func TestPostPrintsLikeACompiler(t *testing.T) {
	svc := &mock.RoomService{}
	svc.PostFn = func(ctx context.Context, c *parley.Caller, room string, body []byte, key string) (*parley.PostResult, error) {
		if strings.Contains(string(body), "n=10") {
			return nil, (&parley.Error{Code: parley.EINVALID, Message: "line 1: n=10 but the message has 9 fact lines", Hint: "try n=9"}).
				With("diagnostics", []parley.Diagnostic{{Line: 1, Col: 27, Severity: "error", Code: "count", Message: "n=10 but the message has 9 fact lines", Fix: "v1 report x to lead n=9"}})
		}
		if strings.Contains(string(body), "again") {
			return nil, parley.Errorf(parley.ECONFLICT, "you posted this as #3").With("seq", 3)
		}
		return &parley.PostResult{Seq: 4, Tokens: 9, Notes: []string{"! ev#1 verified: commit 3f9a2c1"},
			Warnings: []parley.Diagnostic{{Line: 2, Col: 1, Severity: "warning", Message: "an unlabelled bare number"}}}, nil
	}
	url := fakeRoomServer(t, svc)

	code, out, errOut := runClient(t, url, "v1 report x to lead n=10\n", "post", "team")
	if code != 1 || !strings.HasPrefix(errOut, "<stdin>:1:27: n=10 but the message has 9 fact lines (fix: v1 report x to lead n=9)\n") ||
		!strings.Contains(errOut, "hint: try n=9") {
		t.Errorf("invalid: exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	code, out, errOut = runClient(t, url, "v1 note x to all n=1\nok\n", "post", "team", "-")
	if code != 0 || out != "posted #4 (9 tokens)\n! ev#1 verified: commit 3f9a2c1\n" || errOut != "<stdin>:2:1: warning: an unlabelled bare number\n" {
		t.Errorf("posted: exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	code, _, errOut = runClient(t, url, "again", "post", "team")
	if code != 1 || errOut != "parley post: you posted this as #3\n" {
		t.Errorf("repeat: exit %d, stderr %q", code, errOut)
	}
}

func TestClientErrors(t *testing.T) {
	code, _, errOut := runClient(t, "http://127.0.0.1:1", "", "read", "team")
	if code != 1 || !strings.Contains(errOut, "cannot reach the parley server at http://127.0.0.1:1") || !strings.Contains(errOut, "parley serve") {
		t.Errorf("server down: exit %d, %q", code, errOut)
	}
	var out, stderr bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &stderr, getenv: func(string) string { return "" }}
	if code := dispatch(t.Context(), e, []string{"inbox", "team"}); code != 2 || !strings.Contains(stderr.String(), "PARLEY_TOKEN") {
		t.Errorf("no token: exit %d, %q", code, stderr.String())
	}
	if code, _, _ := runClient(t, "http://x", "", "run", "post", "team", "--passed", "1"); code != 2 {
		t.Errorf("--passed without --failed: exit %d", code)
	}
}

func TestFollowReadsEvents(t *testing.T) {
	at := time.Date(2026, 9, 19, 12, 0, 0, 0, time.UTC)
	stored := []*parley.Message{
		{Room: "team", Seq: 1, Seat: "lead", Time: at, Body: "v1 note x to all n=1\nfact\n"},
		{Room: "team", Seq: 2, Seat: "yu", Time: at.Add(time.Minute), Body: "v1 note x to all n=1\nmore\n", Notes: []string{"! note"}},
	}
	msgs := []string{"#1 lead 20260919T120000Z\nv1 note x to all n=1\nfact\n\n", "#2 yu 20260919T120100Z\nv1 note x to all n=1\nmore\n! note\n\n"}
	svc := &mock.RoomService{}
	svc.HoldFn = func(ctx context.Context, c *parley.Caller) (context.Context, context.CancelFunc, error) {
		ctx, cancel := context.WithCancel(ctx)
		return ctx, cancel, nil
	}
	svc.WatchFn = func(ctx context.Context, c *parley.Caller, room string) (<-chan int64, error) {
		return make(chan int64), nil
	}
	svc.MessagesFn = func(ctx context.Context, c *parley.Caller, room string, after int64, limit int, count parley.ReadCount) ([]*parley.Message, int64, error) {
		return stored[min(after, 2):min(after+int64(limit), 2)], 2, nil
	}
	url := fakeRoomServer(t, svc)
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	e := &env{stdin: strings.NewReader(""), stdout: pw, stderr: io.Discard, getenv: func(k string) string {
		return map[string]string{"PARLEY_URL": url, "PARLEY_TOKEN": "team.yu"}[k]
	}}
	done := make(chan int)
	go func() { done <- dispatch(ctx, e, []string{"read", "team", "--follow"}); pw.Close() }()
	want := msgs[0] + msgs[1]
	got := make([]byte, len(want))
	if _, err := io.ReadFull(pr, got); err != nil || string(got) != want {
		t.Errorf("followed %q, %v; want %q", got, err, want)
	}
	cancel()
	go io.Copy(io.Discard, pr)
	if code := <-done; code != 0 {
		t.Errorf("exit %d after interrupt", code)
	}
}
