package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/parleyhq/parley/internal/pgtest"
	"github.com/parleyhq/parley/internal/sqlstore"
)

// TestTopicQueryPlan checks that, on a room of 50,000 messages over 100 topics, the topic
// reads search their index rather than scan the room, the messages in order.
func TestTopicQueryPlan(t *testing.T) {
	s, err := Open(t.Context(), pgtest.DSN(t))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	for _, q := range []string{
		`INSERT INTO rooms (name, policy, created_at, last_seq) VALUES ('r', '{}', now(), 50000)`,
		`INSERT INTO messages (room, seq, seat, time, format, topic, intent, body)
			SELECT 'r', i, 'alice', now(), 'convention', 't' || (i % 100), 'note', convert_to('v1 note', 'UTF8')
			FROM generate_series(1, 50000) i`,
		`INSERT INTO asks (room, seq, line, from_seat, to_seat, topic, state)
			SELECT 'r', i, 2, 'alice', 'bob', 't' || (i % 100), 'open' FROM generate_series(1, 50000) i`,
		`ANALYZE messages`,
		`ANALYZE asks`,
	} {
		if _, err := s.pool.Exec(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, tt := range []struct {
		query   string
		args    []any
		index   string
		ordered bool // read in index order, as a page of LIMIT needs; else sorting the topic's rows will do
	}{
		{sqlstore.QueryTopicMessagesLim, []any{"r", "t7", 0, 64}, "messages_topic", true},
		{sqlstore.QueryTopicAsks, []any{"r", "t7"}, "asks_topic", false},
	} {
		got := explain(t, s.pool, "EXPLAIN "+tt.query, tt.args...)
		if (!strings.Contains(got, "Index Scan using "+tt.index+" ") && !strings.Contains(got, "Index Scan on "+tt.index+" ")) || tt.ordered && strings.Contains(got, "Sort") {
			t.Errorf("plan of the read on %s:\n%s\nwant a scan of index %s (in order: %v)", tt.index, got, tt.index, tt.ordered)
		}
	}
}

// explain runs an EXPLAIN and returns its plan, one line per row.
func explain(t *testing.T, q interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}, sql string, args ...any) string {
	t.Helper()
	rows, err := q.Query(t.Context(), sql, args...)
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	return strings.Join(plan, "\n")
}
