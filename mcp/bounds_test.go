package mcp_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestReadPages: read returns a bounded page and says where the next one starts.
func TestReadPages(t *testing.T) {
	f := newFixture(t)
	if _, err := f.svc.UpdatePolicy(t.Context(), f.admin, "limiter",
		[]byte(`{"seat_messages_per_minute":1e6,"seat_burst":100000,"room_messages_per_minute":1e6,"room_burst":100000}`)); err != nil {
		t.Fatal(err)
	}
	ana := f.connect(t, "ana")
	for i := range 150 {
		if text, isErr := call(t, ana, "post", map[string]any{"body": fmt.Sprintf("v1 note limiter to all n=1\nfact number %d\n", i)}); isErr {
			t.Fatalf("post %d: %s", i, text)
		}
	}
	bo := f.connect(t, "bo")
	text, _ := call(t, bo, "read", nil)
	if !strings.Contains(text, "-- for bo: read up to #100; more after #100: read again --") || strings.Contains(text, "#101 ") {
		t.Fatalf("first read:\n%s", text[max(0, len(text)-400):])
	}
	text, _ = call(t, bo, "read", nil)
	if !strings.Contains(text, "#101 ana ") || !strings.Contains(text, "-- for bo: read up to #150 --") {
		t.Fatalf("second read:\n%s", text[max(0, len(text)-400):])
	}
}

// TestRefusalsBounded: a 65 KB body of empty AACP fields gets a refusal and a lint that list
// the first 20 findings and count the rest.
func TestRefusalsBounded(t *testing.T) {
	f := newFixture(t)
	ana := f.connect(t, "ana")
	head := "REQ|DEV|return:bo|p:1|aacp:1.1|to:bo"
	body := head + strings.Repeat("|", 65000-len(head))
	text, isErr := call(t, ana, "post", map[string]any{"body": body})
	if !isErr || !strings.Contains(text, "diagnostics lists the first 20 of") || len(text) > 8<<10 {
		t.Fatalf("post refusal (%d bytes, error %v):\n%.600s", len(text), isErr, text)
	}
	text, _ = call(t, ana, "lint", map[string]any{"body": body})
	if !strings.Contains(text, "more diagnostics not listed: only the first 20 are") || len(text) > 8<<10 {
		t.Fatalf("lint (%d bytes):\n%.600s", len(text), text)
	}
}
