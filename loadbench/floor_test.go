package loadbench

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestFloorServer holds the floor's handler to hand-worked answers: a seq counted per room
// path from 1, in the answer the poster reads, and a refusal for what is not a post.
func TestFloorServer(t *testing.T) {
	f := &floorServer{seqs: map[string]int64{}}
	do := func(method, path, token, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		f.ServeHTTP(w, r)
		return w
	}
	for i, c := range []struct {
		path, want string
	}{
		{"/rooms/a/messages", `{"seq":1,"tokens":0,"notes":[],"warnings":[]}` + "\n"},
		{"/rooms/a/messages", `{"seq":2,"tokens":0,"notes":[],"warnings":[]}` + "\n"},
		{"/rooms/b/messages", `{"seq":1,"tokens":0,"notes":[],"warnings":[]}` + "\n"},
		{"/rooms/a/messages", `{"seq":3,"tokens":0,"notes":[],"warnings":[]}` + "\n"},
	} {
		w := do("POST", c.path, "t", "v1 status x\n")
		if w.Code != http.StatusCreated || w.Body.String() != c.want || w.Header().Get("Content-Type") != "application/json" {
			t.Errorf("post %d to %s: %d %q (%s), want 201 %q", i, c.path, w.Code, w.Body, w.Header().Get("Content-Type"), c.want)
		}
		if seq, ok := plainAnswer(w.Body.Bytes()); !ok || seq <= 0 {
			t.Errorf("post %d: the poster does not read %q as a plain answer", i, w.Body)
		}
	}
	for _, c := range []struct {
		method, path, token, body string
		code                      int
	}{
		{"GET", "/rooms/a/messages", "t", "", http.StatusNotFound},
		{"POST", "/rooms/a/history", "t", "x", http.StatusNotFound},
		{"POST", "/rooms/a/messages", "", "x", http.StatusUnauthorized},
		{"POST", "/rooms/a/messages", "t", "", http.StatusBadRequest},
		{"POST", "/rooms/a/messages", "t", string(bytes.Repeat([]byte("x"), maxFloorBody+1)), http.StatusRequestEntityTooLarge},
	} {
		if w := do(c.method, c.path, c.token, c.body); w.Code != c.code {
			t.Errorf("%s %s (token %q, %d bytes): %d, want %d", c.method, c.path, c.token, len(c.body), w.Code, c.code)
		}
	}
	if got := f.seqs["/rooms/a/messages"]; got != 3 {
		t.Errorf("the refusals moved room a's seq to %d, want 3", got)
	}
}

// TestRunFloor posts to the floor through the bench's own posters, over loopback: every post
// is answered and read (a post the poster could not read would fail the run).
func TestRunFloor(t *testing.T) {
	seats := []string{"s00", "s01", "s02", "s03"}
	to := []string{"s02", "s03", "all", "all"}
	fl, err := runFloor(context.Background(), seats, to, []string{"r0", "r1"}, 400)
	if err != nil {
		t.Fatal(err)
	}
	if fl.Posts != 400 || fl.PostsPerSecond <= 0 || fl.LatencyMS.P50 <= 0 || fl.LatencyMS.P50 > fl.LatencyMS.Max {
		t.Errorf("floor %+v", fl)
	}
	// A cancelled context fails the floor rather than reporting a rate.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := runFloor(ctx, seats, to, []string{"r0"}, 40); err == nil {
		t.Error("a floor under a cancelled context reported no error")
	}
}
