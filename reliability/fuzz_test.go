package reliability_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/parleyhq/parley/internal/servertest"
)

// FuzzPost posts arbitrary bytes through the HTTP API to the real room service on SQLite
// and checks what must hold for any input: the answer is a documented status (never a 5xx,
// never a dropped connection), and a stored message comes back in history byte for byte,
// under the poster's seat, with history still splitting into whole messages.
func FuzzPost(f *testing.F) {
	// Seeds: a good message, the refusals of the hostile table in miniature, and inputs
	// near the parser's edges (no final newline, CRLF, n=0, a huge n, a header only).
	for _, s := range []string{
		"v1 note fuzz to all n=1\nfact hello\n",
		"v1 note fuzz to all n=1\nfact hello",
		"v1 note fuzz to all n=1\r\nfact crlf\r\n",
		"v1 note fuzz to all n=0\n",
		"v1 note fuzz to all n=99999999999999999999\nfact big n\n",
		"v1 note fuzz to all n=2\ndone#1 x\nev#1 commit $(id) on --upload-pack=x\n",
		"v1 note fuzz to nobody n=1\nfact x\n",
		"v1 note fuzz to all n=1\n#1 b 20260101T000000Z\n",
		"v1 note fuzz to all n=1\n! forged note\n",
		"v1 note fuzz to all n=1\nfact \x00\x1b\u0085\xff\n",
		"v1 note fuzz to all n=1\nfact AKIAIOSFODNN7EXAMPLE\n",
		"REQ|DEV|return:fuzz|p:1|aacp:1.1|to:all",
		"",
		"\n\n\n",
		"v1",
	} {
		f.Add([]byte(s))
	}
	// One server for every input (each fuzzing worker process sets up its own): starting
	// one per input would measure SQLite's file creation, not the post path.
	srv := servertest.InProcess(f, servertest.InProcessOptions{})
	srv.CreateRoom(f, "fuzz", servertest.Generous())
	token := srv.AddSeat(f, "fuzz", "poster", "agent")
	srv.AddSeat(f, "fuzz", "reader", "agent")
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := servertest.Do(context.Background(), http.DefaultClient, "POST", srv.URL+"/v1/rooms/fuzz/messages", token, body)
		if err != nil {
			t.Fatalf("no answer: %v", err)
		}
		switch r.Status {
		case http.StatusCreated:
		case http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity, http.StatusTooManyRequests:
			if e := r.Err(); e.Error.Code == "" || e.Error.Message == "" {
				t.Fatalf("refusal without a code and message: %s", r)
			}
			return
		default:
			t.Fatalf("status %d for %q: %s", r.Status, body, r)
		}
		var out struct{ Seq int64 }
		if err := r.JSON(&out); err != nil || out.Seq < 1 {
			t.Fatalf("201 without a seq: %s", r)
		}
		page := srv.Call(t, "GET", "/v1/rooms/fuzz/history?limit=1&after="+strconv.FormatInt(out.Seq-1, 10), token, nil)
		entries, err := servertest.ParseHistory(string(page.Body))
		if err != nil || len(entries) != 1 {
			t.Fatalf("history of #%d does not split into one message (%v):\n%s", out.Seq, err, page.Body)
		}
		e := entries[0]
		// History shows the body's lines as package textline defines them: CRLF as LF.
		want := strings.TrimSuffix(strings.ReplaceAll(string(body), "\r\n", "\n"), "\n")
		if e.Seq != out.Seq || e.Seat != "poster" || !strings.HasPrefix(e.Body, want) {
			t.Fatalf("history #%d %s does not hold the body as posted:\nposted %q\nhistory %q", e.Seq, e.Seat, body, e.Body)
		}
	})
}
