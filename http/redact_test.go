package http_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/parleyhq/parley"
)

// TestRequestLogRedactsTokens sends tokens where clients put them by mistake (a query
// parameter, a path segment, glued to other text) and checks that the request log, the
// internal-error log and the panic log hold none of them, and say REDACTED instead.
func TestRequestLogRedactsTokens(t *testing.T) {
	seat := "pk_" + strings.Repeat("Zx9", 14) + "Q"
	admin := "admin-" + strings.Repeat("Ab3", 11)
	svc := authOnly()
	svc.RoomFn = func(ctx context.Context, c *parley.Caller, room string) (*parley.Room, error) {
		return nil, errors.New("store failed on " + room) // an internal error, logged with its path
	}
	svc.HistoryFn = func(ctx context.Context, c *parley.Caller, room string, after int64, limit int) ([]byte, int64, error) {
		panic("history of " + room) // the panic log, with its path
	}
	ts, logs := newServer(t, svc)
	for _, path := range []string{
		"/v1/rooms/h/history?token=" + seat,
		"/v1/rooms/h/history?access_token=" + url.QueryEscape(admin) + "&after=1",
		"/v1/rooms/h/history?auth=hunter2secret&key=hunter3secret",
		"/v1/rooms/h/history?q=x" + seat + "y",
		"/v1/rooms/" + seat + "/history",
		"/v1/rooms/" + admin,
		"/v1/nothing/" + url.PathEscape("x"+seat),
		"/healthz?token=" + seat,
	} {
		do(t, ts, "GET", path, "admin", "")
	}
	out := logs.String()
	for _, secret := range []string{seat[3:23], admin[6:26], "hunter2secret", "hunter3secret"} {
		if strings.Contains(out, secret) {
			t.Errorf("the log holds %q:\n%s", secret, out)
		}
	}
	if n := strings.Count(out, "REDACTED"); n < 8 {
		t.Errorf("%d REDACTED marks, want at least 8:\n%s", n, out)
	}
	if !strings.Contains(out, "after=1") || !strings.Contains(out, "path=/v1/rooms/REDACTED/history") {
		t.Errorf("the log lost what is not secret:\n%s", out)
	}
}
