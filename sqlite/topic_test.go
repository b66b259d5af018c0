package sqlite

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestTopicQueryPlan checks that the topic reads search their index rather than scan the
// room: on a room of 50,000 messages, a scan would cost the room, not the topic.
func TestTopicQueryPlan(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	for _, tt := range []struct {
		query string
		args  []any
		index string
	}{
		{qTopicMessages, []any{"r", "t", 0, 64}, "messages_topic"},
		{qTopicAsks, []any{"r", "t"}, "asks_topic"},
	} {
		rows, err := s.read.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+tt.query, tt.args...)
		if err != nil {
			t.Fatalf("explain: %v", err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatalf("explain: %v", err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		got := strings.Join(plan, "; ")
		// The index gives the order too: no temporary B-tree to sort the topic.
		if !strings.Contains(got, "SEARCH") || !strings.Contains(got, "INDEX "+tt.index+" ") || strings.Contains(got, "TEMP B-TREE") {
			t.Errorf("plan of the read on %s:\n%s\nwant a search of index %s, in order", tt.index, got, tt.index)
		}
	}
}
