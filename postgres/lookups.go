package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/sqlstore"
)

// Point reads in batches. Every request authenticates its bearer token (SeatByToken), and every
// post that cites a run looks it up (Run) to freeze the verdict in its notes. Each is a tiny
// read, but on PostgreSQL a statement costs its round trip and its start far more than its
// index probe, and with many requests in flight those costs are most of what the database
// spends. So the lookups waiting in this process at the same moment go in one statement
// (token hashes for every room at once; run ids per room), as the rate takes (rates.go) and
// the appends (group.go) do: a batch takes the lookups already waiting and never waits for
// more, so a lone lookup runs at once.
//
// Nothing is cached: the batch's statement starts after every lookup in it was asked for, so
// its snapshot holds whatever any process committed before that (a revocation, a rotation, a
// run), exactly as a statement of the lookup's own would (TestLookupBatchSeesCommits).

// maxLookupBatch bounds one statement's keys.
const maxLookupBatch = 64

// inList is "$from, …" for n parameters. A batch's keys go in a list of n parameters, n the
// next power of two (the last key repeated to fill it): seven statements in all, each planned
// like a statement of one key, so that PostgreSQL soon keeps one generic plan for each. An
// array parameter (= ANY($1)) left it guessing the array's length, and it planned the lookup
// again on every call.
func inList(from, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "$%d", from+i)
	}
	return b.String()
}

// padded are keys, then the last key again up to the next power of two, as query arguments
// after the ones in pre.
func padded(pre []any, keys []string, conv func(string) any) []any {
	n := 1
	for n < len(keys) {
		n *= 2
	}
	args := make([]any, len(pre), len(pre)+n)
	copy(args, pre)
	for i := range n {
		args = append(args, conv(keys[min(i, len(keys)-1)]))
	}
	return args
}

var (
	tokenQueries = lookupQueries(func(n int) string {
		return `SELECT ` + sqlstore.SeatColumns + ` FROM seats WHERE token_hash IN (` + inList(1, n) + `)`
	})
	runQueries = lookupQueries(func(n int) string {
		return `SELECT ` + sqlstore.RunColumns + ` FROM runs WHERE room = $1 AND id IN (` + inList(2, n) + `)`
	})
)

// lookupQueries maps a padded list's length to its statement.
func lookupQueries(q func(n int) string) map[int]string {
	m := map[int]string{}
	for n := 1; n <= maxLookupBatch; n *= 2 {
		m[n] = q(n)
	}
	return m
}

// lookupOp is one lookup waiting for its batch: key is a token hash or a run id.
type lookupOp struct {
	ctx  context.Context
	key  string
	seat *parley.Seat // SeatByToken's answer
	run  *parley.Run  // Run's answer
	err  error
	done chan struct{}
}

// lookup queues key on q under batch key room, and waits for its answer.
func (s *Store) lookup(ctx context.Context, q *roomBatches[*lookupOp], room, key string, run func(string, []*lookupOp)) (*lookupOp, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o := &lookupOp{ctx: ctx, key: key, done: make(chan struct{})}
	q.add(room, o, maxLookupBatch, run)
	select {
	case <-o.done:
		return o, o.err
	case <-ctx.Done():
		// The batch answers it all the same, for nobody.
		return nil, ctx.Err()
	}
}

// live are the ops of batch whose callers still wait; each key once in keys.
func live(batch []*lookupOp) (ops []*lookupOp, keys []string) {
	seen := make(map[string]bool, len(batch))
	for _, o := range batch {
		if o.ctx.Err() != nil {
			o.err = o.ctx.Err()
			continue
		}
		ops = append(ops, o)
		if !seen[o.key] {
			seen[o.key] = true
			keys = append(keys, o.key)
		}
	}
	return ops, keys
}

// SeatByToken returns the seat whose token hashes to hash, revoked or not. ENOTFOUND.
func (s *Store) SeatByToken(ctx context.Context, hash []byte) (*parley.Seat, error) {
	if len(hash) == 0 {
		return nil, sqlstore.NoSuchToken()
	}
	o, err := s.lookup(ctx, &s.tokens, "", string(hash), s.runTokens)
	if err != nil {
		return nil, err
	}
	if o.seat == nil {
		return nil, sqlstore.NoSuchToken()
	}
	// Each caller its own copy, as a query of its own would give: callers may keep and change it.
	st := *o.seat
	st.TokenHash = slices.Clone(st.TokenHash)
	if st.RevokedAt != nil {
		t := *st.RevokedAt
		st.RevokedAt = &t
	}
	return &st, nil
}

// runTokens answers a batch of token lookups with one statement.
func (s *Store) runTokens(_ string, batch []*lookupOp) {
	answer(s, batch, nil, func(k string) any { return []byte(k) }, tokenQueries, "seat by token",
		func(row sqlstore.Row) (string, *parley.Seat, error) {
			st, err := sqlstore.ScanSeat(row)
			if err != nil {
				return "", nil, err
			}
			return string(st.TokenHash), st, nil
		},
		func(o *lookupOp, st *parley.Seat) { o.seat = st })
}

// Run returns one run. ENOTFOUND.
func (s *Store) Run(ctx context.Context, room, id string) (*parley.Run, error) {
	o, err := s.lookup(ctx, &s.runs, room, id, s.runRuns)
	if err != nil {
		return nil, err
	}
	if o.run == nil {
		return nil, sqlstore.RunNotFound(room, id)
	}
	r := *o.run
	return &r, nil
}

// runRuns answers a batch of one room's run lookups with one statement.
func (s *Store) runRuns(room string, batch []*lookupOp) {
	answer(s, batch, []any{room}, func(k string) any { return k }, runQueries, "run",
		func(row sqlstore.Row) (string, *parley.Run, error) {
			r, err := sqlstore.ScanRun(row)
			if err != nil {
				return "", nil, err
			}
			return r.ID, r, nil
		},
		func(o *lookupOp, r *parley.Run) { o.run = r })
}

// answer runs one batch of lookups as one statement: the live ops' keys, each once, converted
// by conv and padded after pre, in queries' statement for that many keys; each op gets the
// row scan found for its key (set; nil when none did), or the statement's error, named what.
func answer[T any](s *Store, batch []*lookupOp, pre []any, conv func(string) any, queries map[int]string, what string,
	scan func(sqlstore.Row) (string, T, error), set func(*lookupOp, T)) {
	defer closeAll(batch)
	ops, keys := live(batch)
	if len(ops) == 0 {
		return
	}
	args := padded(pre, keys, conv)
	found := make(map[string]T, len(keys))
	err := pgDB{s.pool}.Query(context.Background(), queries[len(args)-len(pre)], args, func(row sqlstore.Row) error {
		k, v, err := scan(row)
		if err == nil {
			found[k] = v
		}
		return err
	})
	for _, o := range ops {
		set(o, found[o.key])
		if err != nil {
			o.err = fmt.Errorf("%s: %w", what, err)
		}
	}
}

func closeAll(batch []*lookupOp) {
	for _, o := range batch {
		close(o.done)
	}
}
