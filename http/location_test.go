package http_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/parleyhq/parley/bpe"
)

// TestPostAnswer checks the whole answer to a post over the real server: 201, the JSON with
// its four fields, its Content-Type and Content-Length, and a Location that reads the message
// back (after=seq-1, limit=1), for seqs of one, two and three digits.
func TestPostAnswer(t *testing.T) {
	enc, err := bpe.Get("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	ts := newRealServer(t)
	tok := benchRoom(t, ts.URL)
	for i := 1; i <= 120; i++ {
		msg := fmt.Sprintf("v1 note limiter to all n=1\ncost %d tokens\n", i)
		req, _ := http.NewRequest("POST", ts.URL+"/v1/rooms/bench/messages", strings.NewReader(msg))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if i != 1 && i != 12 && i != 120 {
			continue
		}
		want := fmt.Sprintf(`{"seq":%d,"tokens":%d,"notes":[],"warnings":[]}`+"\n", i, enc.Count(msg))
		if resp.StatusCode != 201 || string(body) != want {
			t.Errorf("post %d: %d %q, want 201 %q", i, resp.StatusCode, body, want)
		}
		if ct, cl := resp.Header.Get("Content-Type"), resp.Header.Get("Content-Length"); ct != "application/json" || cl != fmt.Sprint(len(want)) {
			t.Errorf("post %d: Content-Type %q, Content-Length %q", i, ct, cl)
		}
		if loc, want := resp.Header.Get("Location"), fmt.Sprintf("/v1/rooms/bench/history?after=%d&limit=1", i-1); loc != want {
			t.Errorf("post %d: Location %q, want %q", i, loc, want)
		}
	}
}
