package redact

import (
	"bytes"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"testing"
)

const (
	seatTok  = "pk_Xq3vB9mZ0aLkP2sT7wYc4nR8eG1hJ6uD5fV0bN3xQ9z"
	adminTok = "admin-h7Gk2LmP9qRs4TvW8xYz1AbCdEfG"
	b64Tok   = "q7Jx+9ZkLmN2pQ4rS6tU8vW0yA1bC3dE5fG7hJ9kL1m="
	hexTok   = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
)

func TestQuery(t *testing.T) {
	for in, want := range map[string]string{
		"after=3&limit=10":                    "after=3&limit=10",
		"token=abc":                           "token=REDACTED",
		"TOKEN=abc&after=1":                   "TOKEN=REDACTED&after=1",
		"access_token=" + seatTok:             "access_token=REDACTED",
		"auth=x&key=y&api_key=z&csrf_token=w": "auth=REDACTED&key=REDACTED&api_key=REDACTED&csrf_token=REDACTED",
		"q=" + seatTok:                        "q=REDACTED",
		"q=x" + seatTok + "y":                 "q=REDACTED",
		"q=" + url.QueryEscape(b64Tok):        "q=REDACTED",
		"q=" + hexTok:                         "q=REDACTED",
		"q=" + adminTok:                       "q=REDACTED",
		seatTok:                               "REDACTED",
		"topic=limiter&after=12":              "topic=limiter&after=12",
		"q=%zz" + seatTok:                     "q=REDACTED",
	} {
		if got := Query(in); got != want {
			t.Errorf("Query(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPath(t *testing.T) {
	for in, want := range map[string]string{
		"/v1/rooms/limiter/history":          "/v1/rooms/limiter/history",
		"/v1/rooms/" + seatTok + "/history":  "/v1/rooms/REDACTED/history",
		"/rooms/x" + seatTok:                 "/rooms/REDACTED",
		"/v1/rooms/h/state/" + adminTok:      "/v1/rooms/h/state/REDACTED",
		"/" + hexTok:                         "/REDACTED",
		"/v1/rooms/h/seats/builder-2/rotate": "/v1/rooms/h/seats/builder-2/rotate",
		"/v1/rooms/h/state/limiter-v2":       "/v1/rooms/h/state/limiter-v2",
	} {
		if got := Path(in); got != want {
			t.Errorf("Path(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReplaceAttr(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: ReplaceAttr("plain-admin-secret-1234")}))
	log.Info("request", "url", "http://h/x?token="+seatTok, "err", errors.New("bad "+adminTok), "admin", "is plain-admin-secret-1234", "n", 3, "room", "limiter")
	out := buf.String()
	for _, s := range []string{seatTok[3:20], adminTok[6:20], "plain-admin-secret"} {
		if strings.Contains(out, s) {
			t.Errorf("log holds %q: %s", s, out)
		}
	}
	if !strings.Contains(out, "room=limiter") || !strings.Contains(out, "n=3") {
		t.Errorf("log lost ordinary attributes: %s", out)
	}
}

func TestURL(t *testing.T) {
	u, _ := url.Parse("http://user:pw@h/rooms/" + seatTok + "?token=x&after=2")
	if got := URL(u); got != "http://h/rooms/REDACTED?token=REDACTED&after=2" {
		t.Errorf("URL = %q", got)
	}
}
