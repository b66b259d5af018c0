package postgres

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/parleyhq/parley/internal/pgtest"
)

// TestDuplicateQueryPlan checks that the dedup check finds a hash through the (room, seat,
// hash, seq) index, even on a table never analysed (a new database) and under the generic
// plan that a prepared statement settles on: a plan that filtered the hash over the seat's
// messages would cost each append, under the room's lock, a read of all of them.
func TestDuplicateQueryPlan(t *testing.T) {
	s, err := Open(t.Context(), pgtest.DSN(t))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	conn, err := s.pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for _, q := range []string{
		`INSERT INTO rooms (name, policy, created_at, last_seq) VALUES ('r', '{}', now(), 2000)`,
		// One seat's 2,000 messages, each body different; no ANALYZE.
		`INSERT INTO messages (room, seq, seat, time, format, body, hash)
			SELECT 'r', i, 'alice', now(), 'convention', convert_to('v1 note ' || i, 'UTF8'),
				sha256(convert_to('v1 note ' || i, 'UTF8'))
			FROM generate_series(1, 2000) i`,
		// Two copies of one body by carol, the later seq with the earlier time (another
		// server's clock): the window's copy is not the latest copy.
		`INSERT INTO messages (room, seq, seat, time, format, body, hash) VALUES
			('r', 2001, 'carol', now(), 'convention', 'x', sha256(convert_to('v1 note carol', 'UTF8'))),
			('r', 2002, 'carol', now() - interval '2 hours', 'convention', 'x', sha256(convert_to('v1 note carol', 'UTF8')))`,
		`SET plan_cache_mode = force_generic_plan`,
		`PREPARE dup (text, text, bytea, timestamptz, bigint) AS ` + qCheck,
	} {
		if _, err := conn.Exec(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	since := time.Now().Add(-time.Hour)
	sinceArg := "'" + since.UTC().Format(time.RFC3339Nano) + "'"
	got := explain(t, conn, `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
		EXECUTE dup('r', 'alice', sha256(convert_to('v1 note 7', 'UTF8')), `+sinceArg+`, 500)`)
	// Both lookups of the hash on its index, and no more rows read than the seat's messages
	// after the copy (the count, at most 500) and the copy itself.
	if n := strings.Count(got, "using messages_seat_hash"); n != 2 || strings.Contains(got, "Filter: (hash") || strings.Contains(got, "Rows Removed by Filter") {
		t.Errorf("plan of the dedup check:\n%s\nwant both lookups of the hash by index messages_seat_hash, nothing filtered", got)
	}
	var d dupCheck
	if err := conn.QueryRow(t.Context(), `EXECUTE dup('r', 'alice', sha256(convert_to('v1 note 1990', 'UTF8')), `+sinceArg+`, 500)`).Scan(&d.window, &d.latest, &d.after); err != nil {
		t.Fatal(err)
	}
	// Hand-worked: message 1990 is the latest copy, in the window, and followed by 10.
	if d != (dupCheck{window: 1990, latest: 1990, after: 10}) {
		t.Errorf("dedup check of message 1990 = %+v, want window 1990, latest 1990, 10 after", d)
	}

	// The same checks for a batch, in one call (qChecks): the query of parley_dedup_checks
	// as the database holds it, planned once with the function's own settings, reads the same
	// indexes, and gives the same answers, each for its place among the checks.
	query, settings := dedupFunction(t, conn)
	for _, set := range settings {
		name, value, ok := strings.Cut(set, "=")
		if !ok {
			t.Fatalf("setting %q of parley_dedup_checks", set)
		}
		if _, err := conn.Exec(t.Context(), `SELECT set_config($1, $2, false)`, name, value); err != nil {
			t.Fatalf("SET %s: %v", set, err)
		}
	}
	if !slices.Contains(settings, "plan_cache_mode=force_generic_plan") {
		t.Errorf("parley_dedup_checks is set %q: want plan_cache_mode=force_generic_plan, one plan per connection", settings)
	}
	if _, err := conn.Exec(t.Context(), `PREPARE dups (text, text[], bytea[], timestamptz[], bigint[]) AS `+query); err != nil {
		t.Fatal(err)
	}
	// The plan, on alice's and bob's checks: none of them reads a row that its lookup then
	// drops.
	planArgs := `('r', ARRAY['alice', 'alice', 'alice', 'bob'],
		ARRAY[sha256(convert_to('v1 note 7', 'UTF8')), sha256(convert_to('v1 note 1990', 'UTF8')), sha256(convert_to('v1 note 1990', 'UTF8')), sha256(convert_to('v1 note 7', 'UTF8'))],
		ARRAY[` + sinceArg + `::timestamptz, ` + sinceArg + `, NULL, ` + sinceArg + `], ARRAY[500, 5, 500, 500]::bigint[])`
	carol := `sha256(convert_to('v1 note carol', 'UTF8'))`
	args := `('r', ARRAY['alice', 'alice', 'alice', 'bob', 'carol', 'carol', 'carol'],
		ARRAY[sha256(convert_to('v1 note 7', 'UTF8')), sha256(convert_to('v1 note 1990', 'UTF8')), sha256(convert_to('v1 note 1990', 'UTF8')), sha256(convert_to('v1 note 7', 'UTF8')), ` +
		carol + `, ` + carol + `, ` + carol + `],
		ARRAY[` + sinceArg + `::timestamptz, ` + sinceArg + `, NULL, ` + sinceArg + `, ` + sinceArg + `, ` + sinceArg + `, NULL], ARRAY[500, 5, 500, 500, 1, 0, 5]::bigint[])`
	got = explain(t, conn, `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE dups`+planArgs)
	if n := strings.Count(got, "using messages_seat_hash"); n != 2 || !strings.Contains(got, "using messages_seat_seq") ||
		strings.Contains(got, "Filter: (hash") || strings.Contains(got, "Rows Removed by Filter") {
		t.Errorf("plan of the batch's dedup checks:\n%s\nwant both lookups of the hash by index messages_seat_hash, the count by messages_seat_seq, nothing filtered", got)
	}
	rows, err := conn.Query(t.Context(), `EXECUTE dups`+args)
	if err != nil {
		t.Fatal(err)
	}
	ds := make([]dupCheck, 7)
	for rows.Next() {
		var nth int
		var d dupCheck
		if err := rows.Scan(&nth, &d.window, &d.latest, &d.after); err != nil {
			t.Fatal(err)
		}
		if nth < 1 || nth > len(ds) {
			t.Fatalf("a row for check %d of %d", nth, len(ds))
		}
		ds[nth-1] = d
	}
	rows.Close()
	// Hand-worked: 7 is followed by 1,993 (counted up to 500); 1990 by 10, counted up to 5; no
	// window without a since; bob has posted nothing; carol's copy in the window is 2001 (2002
	// is older than the window), her latest copy 2002, followed by nothing; no latest copy
	// without a last N.
	want := []dupCheck{{7, 7, 500}, {1990, 1990, 5}, {0, 1990, 10}, {0, 0, 0}, {2001, 2002, 0}, {2001, 0, 0}, {0, 2002, 0}}
	if !slices.Equal(ds, want) {
		t.Errorf("the batch's dedup checks = %+v, want %+v", ds, want)
	}
}

// dedupFunction is the query that parley_dedup_checks (migration 0010) runs, as the database
// holds it, and the settings the function runs with (name=value).
func dedupFunction(t *testing.T, conn *pgxpool.Conn) (query string, settings []string) {
	t.Helper()
	var src string
	if err := conn.QueryRow(t.Context(), `SELECT prosrc, coalesce(proconfig, '{}') FROM pg_proc WHERE proname = 'parley_dedup_checks'`).Scan(&src, &settings); err != nil {
		t.Fatalf("parley_dedup_checks: %v", err)
	}
	_, query, ok := strings.Cut(src, "RETURN QUERY")
	if i := strings.LastIndex(query, ";"); ok && i >= 0 {
		return query[:i], settings
	}
	t.Fatalf("no RETURN QUERY …; in parley_dedup_checks:\n%s", src)
	return "", nil
}
