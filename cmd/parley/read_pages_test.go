package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	phttp "github.com/parleyhq/parley/http"
	"github.com/parleyhq/parley/internal/sqlitetest"
	"github.com/parleyhq/parley/room"
)

// TestReadFollowsPages: `parley read` prints the whole history although the server pages it
// (1,000 messages a page), and --limit and --after still count messages across pages.
func TestReadFollowsPages(t *testing.T) {
	ctx := t.Context()
	st := sqlitetest.Open(t)
	svc, err := room.New(st, room.Config{AdminToken: "admin-token-for-the-read-test-0001", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	admin, _ := svc.Authenticate(ctx, "admin-token-for-the-read-test-0001")
	if _, err := svc.CreateRoom(ctx, admin, "team", nil); err != nil {
		t.Fatal(err)
	}
	_, tok, err := svc.AddSeat(ctx, admin, "team", "yu", parley.RoleAgent)
	if err != nil {
		t.Fatal(err)
	}
	const n = 2500
	for i := range n {
		body := fmt.Sprintf("v1 note t to all n=1\nfact %d\n", i+1)
		h := sha256.Sum256([]byte(body))
		if _, err := st.Append(ctx, &parley.Append{Message: &parley.Message{Room: "team", Seat: "yu", Time: time.Now().UTC(),
			Format: parley.FormatConvention, Body: body, Tokens: 5, Hash: h[:]}}); err != nil {
			t.Fatal(err)
		}
	}
	ts := httptest.NewServer(phttp.NewServer(svc, phttp.WithLogger(slog.New(slog.DiscardHandler))))
	t.Cleanup(ts.Close)
	read := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: func(k string) string {
			return map[string]string{"PARLEY_URL": ts.URL, "PARLEY_TOKEN": tok}[k]
		}}
		if code := dispatch(ctx, e, append([]string{"read", "team"}, args...)); code != 0 {
			t.Fatalf("parley read %v: exit %d: %s", args, code, errOut.String())
		}
		return out.String()
	}
	whole, _, err := svc.History(ctx, admin, "team", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := read()
	if got := strings.Count(out, "\nv1 note t"); got != n || !strings.HasPrefix(out, string(whole)) || !strings.Contains(out, "\nfact 2500\n") {
		t.Fatalf("parley read printed %d messages, want %d", got, n)
	}
	if out := read("--limit", "1500"); strings.Count(out, "\nv1 note t") != 1500 || !strings.HasSuffix(out, "fact 1500\n\n") {
		t.Fatalf("--limit 1500 printed %d messages", strings.Count(out, "\nv1 note t"))
	}
	if out := read("--after", "900", "--limit", "200"); strings.Count(out, "\nv1 note t") != 200 || !strings.HasPrefix(out, "#901 ") {
		t.Fatalf("--after 900 --limit 200 printed %d messages", strings.Count(out, "\nv1 note t"))
	}
}
