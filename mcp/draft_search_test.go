package mcp_test

import (
	"strings"
	"testing"
)

// The post tool takes a message by its parts and the server counts n=; what is stored, and
// what every reader gets, is exactly the composed text.
func TestPostByParts(t *testing.T) {
	f := newFixture(t)
	ana, bo := f.connect(t, "ana"), f.connect(t, "bo")

	text, isErr := call(t, ana, "post", map[string]any{
		"intent": "request", "topic": "limiter", "to": []any{"bo"},
		"lines": []any{"req add a token bucket to POST /v1/post", "ask burst 10 ok?"},
	})
	if isErr || !strings.Contains(text, "posted #1") {
		t.Fatalf("post by parts: %v %s", isErr, text)
	}
	// The same text as the hand-written request the other tests post (n=2 counted by hand).
	msg, _, err := f.svc.History(t.Context(), f.admin, "limiter", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if body := string(msg[strings.IndexByte(string(msg), '\n')+1:]); !strings.HasPrefix(body, request+"\n") {
		t.Errorf("stored body:\n%q\nwant:\n%q", body, request)
	}
	text, _ = call(t, bo, "inbox", nil)
	if !strings.Contains(text, "burst 10 ok?") {
		t.Errorf("the ask of a post by parts did not reach bo's inbox:\n%s", text)
	}

	// room may be given: the seat's own, or it is refused.
	text, isErr = call(t, ana, "post", map[string]any{"room": "other", "intent": "note", "topic": "x", "to": []any{"all"}, "lines": []any{"a"}})
	if !isErr || !strings.HasPrefix(text, "forbidden: ") || !strings.Contains(text, "sits in room limiter") {
		t.Errorf("post to another room: %v %s", isErr, text)
	}
	if text, isErr = call(t, bo, "search", map[string]any{"room": "other", "query": "burst"}); !isErr || !strings.HasPrefix(text, "forbidden: ") {
		t.Errorf("search of another room: %v %s", isErr, text)
	}
	if text, isErr = call(t, bo, "search", map[string]any{"room": "limiter", "query": "burst"}); isErr || !strings.Contains(text, "#1 ana ") {
		t.Errorf("search naming the seat's room: %v %s", isErr, text)
	}

	// re is written into the header; an answer closes the ask.
	text, isErr = call(t, bo, "post", map[string]any{
		"room": "limiter", "intent": "answer", "topic": "limiter", "to": []any{"ana"}, "re": 1, "lines": []any{"ok burst 10"},
	})
	if isErr {
		t.Fatalf("answer by parts: %s", text)
	}
	hist, _, err := f.svc.History(t.Context(), f.admin, "limiter", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(hist), "\nv1 answer limiter to ana re 1 n=1\nok burst 10\n") {
		t.Errorf("history of #2:\n%s", hist)
	}

	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"no lines", map[string]any{"intent": "note", "topic": "x", "to": []any{"all"}}, "lines is empty"},
		{"bad intent", map[string]any{"intent": "reports", "topic": "x", "to": []any{"all"}, "lines": []any{"a"}}, "intent `reports` is not one of request"},
		{"header as a line", map[string]any{"intent": "note", "topic": "x", "to": []any{"all"}, "lines": []any{"v1 note x to all n=1", "a"}}, "is itself a header"},
		{"line break", map[string]any{"intent": "note", "topic": "x", "to": []any{"all"}, "lines": []any{"a\nb"}}, "holds a line break"},
		{"both", map[string]any{"body": request, "intent": "note"}, "both body and"},
		{"nothing", map[string]any{}, "nothing to post"},
		// What the pipeline checks holds for parts as for text: bo does not sit in room other.
		{"unknown seat", map[string]any{"intent": "note", "topic": "x", "to": []any{"cy"}, "lines": []any{"a"}}, "cy"},
	} {
		text, isErr := call(t, ana, "post", tc.args)
		if !isErr || !strings.Contains(text, tc.want) || !strings.HasPrefix(text, "invalid: ") {
			t.Errorf("%s: error %v, text:\n%s\nwant an invalid error holding %q", tc.name, isErr, text, tc.want)
		}
	}
	if last, _, err := f.svc.History(t.Context(), f.admin, "limiter", 2, 0); err != nil || len(last) != 0 {
		t.Errorf("a refused post stored something: %q %v", last, err)
	}
}

func TestSearchTool(t *testing.T) {
	f := newFixture(t)
	ana, bo := f.connect(t, "ana"), f.connect(t, "bo")
	for _, lines := range [][]any{
		{"opt/A Redis sliding window", "opt/B in-process bucket"},
		{"nothing relevant"},
		{"decided Redis, window 60s"},
	} {
		if text, isErr := call(t, ana, "post", map[string]any{"intent": "note", "topic": "limiter", "to": []any{"all"}, "lines": lines}); isErr {
			t.Fatal(text)
		}
	}
	text, isErr := call(t, bo, "search", map[string]any{"query": `redis "window`})
	if isErr {
		t.Fatalf("search: %s", text)
	}
	// Both hold both words; equal ranks come newest first. Only the matching lines are quoted.
	i3, i1 := strings.Index(text, "#3 ana "), strings.Index(text, "#1 ana ")
	if i3 < 0 || i1 < 0 || i3 > i1 || strings.Contains(text, "#2 ") || strings.Contains(text, "in-process bucket") ||
		!strings.Contains(text, "  opt/A Redis sliding window\n") || !strings.Contains(text, " topic limiter\n") ||
		!strings.Contains(text, "not instructions") {
		t.Errorf("search results:\n%s", text)
	}
	text, _ = call(t, bo, "search", map[string]any{"query": "redis", "limit": 1})
	if !strings.Contains(text, "#3 ") || strings.Contains(text, "#1 ") || !strings.Contains(text, "more matches") {
		t.Errorf("search limit 1:\n%s", text)
	}
	text, _ = call(t, bo, "search", map[string]any{"query": "absent"})
	if !strings.HasPrefix(text, `no messages hold a word of "absent"`) {
		t.Errorf("search for an absent word:\n%s", text)
	}
	text, isErr = call(t, bo, "search", map[string]any{"query": " "})
	if !isErr || !strings.Contains(text, "query is empty") {
		t.Errorf("empty query: %v %s", isErr, text)
	}
	text, isErr = call(t, bo, "search", map[string]any{"query": "redis", "limit": 101})
	if !isErr || !strings.Contains(text, "limit=101") {
		t.Errorf("limit 101: %v %s", isErr, text)
	}
}
