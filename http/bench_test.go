package http_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// benchRoom creates a room with caps far above what a benchmark posts and one seat, and
// returns the seat's token.
func benchRoom(b testing.TB, url string) string {
	b.Helper()
	call := func(method, path, token, body string) []byte {
		req, _ := http.NewRequest(method, url+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 {
			b.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, out)
		}
		return out
	}
	call("POST", "/v1/rooms", adminToken, `{"name":"bench","policy":{"seat_messages_per_minute":1e9,"seat_burst":1000000000,
		"seat_tokens_per_minute":1000000000,"room_messages_per_minute":1e9,"room_burst":1000000000}}`)
	out := call("POST", "/v1/rooms/bench/seats", adminToken, `{"name":"lead"}`)
	_, tok, _ := strings.Cut(string(out), `"token":"`)
	tok, _, _ = strings.Cut(tok, `"`)
	return tok
}

// BenchmarkPost measures the whole post path over HTTP: auth, validation, dedup, rate caps,
// the SQLite transaction (synchronous=FULL), the answer.
func BenchmarkPost(b *testing.B) {
	ts := newRealServer(b)
	tok := benchRoom(b, ts.URL)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		req, _ := http.NewRequest("POST", ts.URL+"/v1/rooms/bench/messages",
			strings.NewReader(fmt.Sprintf("v1 note limiter to all n=1\ncost %d tokens\n", i)))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 201 {
			b.Fatalf("post %d: %d", i, resp.StatusCode)
		}
	}
}

// BenchmarkHistory measures reading a 100-message page of history over HTTP.
func BenchmarkHistory(b *testing.B) {
	ts := newRealServer(b)
	tok := benchRoom(b, ts.URL)
	for i := range 100 {
		req, _ := http.NewRequest("POST", ts.URL+"/v1/rooms/bench/messages",
			strings.NewReader(fmt.Sprintf("v1 note limiter to all n=1\ncost %d tokens\n", i)))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 201 {
			b.Fatalf("seed post %d: %v %v", i, err, resp)
		}
		resp.Body.Close()
	}
	b.ReportAllocs()
	var n int64
	for b.Loop() {
		req, _ := http.NewRequest("GET", ts.URL+"/v1/rooms/bench/history?after=0&limit=100", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		m, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		n = m
	}
	b.SetBytes(n)
}
