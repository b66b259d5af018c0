package sqlite

import (
	"fmt"
	"github.com/parleyhq/parley/internal/sqlstore"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/storetest"
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
		{sqlstore.QueryTopicMessagesLim, []any{"r", "t", 0, 64}, "messages_topic"},
		{sqlstore.QueryTopicAsks, []any{"r", "t"}, "asks_topic"},
	} {
		got := queryPlan(t, s, tt.query, tt.args...)
		// The index gives the order too: no temporary B-tree to sort the topic.
		if !strings.Contains(got, "SEARCH") || !strings.Contains(got, "INDEX "+tt.index+" ") || strings.Contains(got, "TEMP B-TREE") {
			t.Errorf("plan of the read on %s:\n%s\nwant a search of index %s, in order", tt.index, got, tt.index)
		}
	}
}

// TestTopicIndexMigration checks that a database from before migration 0002, with messages in
// it, gains the topic indexes when opened, and that the topic reads then see its messages.
func TestTopicIndexMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	storetest.MustCreateRoom(t, s, "r")
	for i, topic := range []string{"a", "b", "a"} {
		storetest.MustAppend(t, s, &parley.Append{
			Message: &parley.Message{Room: "r", Seat: "alice", Format: parley.FormatConvention, Topic: topic, Body: fmt.Sprintf("v1 note %s to all n=0 %d", topic, i)},
			Asks:    []*parley.Ask{{Line: 2, From: "alice", To: "bob", Topic: topic, Text: "?"}},
		})
	}
	// Back to schema version 1, as a database written by the previous parley.
	for _, q := range []string{`DROP INDEX messages_topic`, `DROP INDEX asks_topic`, `DELETE FROM schema_migrations WHERE version = 2`} {
		if _, err := s.write.ExecContext(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.Close()

	s, err = Open(t.Context(), path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	var n int
	if err := s.read.QueryRowContext(t.Context(), `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN ('messages_topic', 'asks_topic')`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("topic indexes after reopening = %d, %v; want 2", n, err)
	}
	msgs, err := s.TopicMessages(t.Context(), "r", "a", 0, 0)
	if err != nil || len(msgs) != 2 || msgs[0].Seq != 1 || msgs[1].Seq != 3 {
		t.Fatalf("TopicMessages(a) = %d messages, %v; want #1 and #3", len(msgs), err)
	}
	asks, err := s.TopicAsks(t.Context(), "r", "b")
	if err != nil || len(asks) != 1 || asks[0].Seq != 2 {
		t.Fatalf("TopicAsks(b) = %d asks, %v; want #2's", len(asks), err)
	}
}

// queryPlan is SQLite's plan for query on the store's read pool: the details of EXPLAIN QUERY
// PLAN's rows, joined by "; ".
func queryPlan(t *testing.T, s *Store, query string, args ...any) string {
	t.Helper()
	rows, err := s.read.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatalf("explain %s: %v", query, err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatalf("explain: %v", err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("explain: %v", err)
	}
	return strings.Join(plan, "; ")
}
