package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/sqlstore"
)

// Point reads in batches. Every request authenticates its bearer token (SeatByToken), and every
// post that cites a run looks it up (Run) to freeze the verdict in its notes. Each is a tiny
// read, but on PostgreSQL a statement costs its round trip and its start far more than its
// index probe, and with many requests in flight those costs are most of what the database
// spends. So the lookups waiting in this process at the same moment form one batch, as the
// rate takes (rates.go) and the appends (group.go) do: one statement for the token hashes of
// every room, one for each room's run ids, all sent in one round trip. A batch takes the
// lookups already waiting and never waits for more, so a lone lookup runs at once. Token and
// run lookups share the batch because a post makes both, one after the other: with separate
// batches, each made its own round trip.
//
// Nothing is cached: each statement starts after every lookup in it was asked for, so its
// snapshot holds whatever any process committed before that (a revocation, a rotation, a
// run), exactly as a statement of the lookup's own would (TestLookupsConcurrent).

// maxLookupBatch bounds one batch's lookups, and so one statement's keys.
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

// lookupOp is one lookup waiting for its batch: key is a token hash, or a run id of room.
type lookupOp struct {
	ctx   context.Context
	run   bool   // a run lookup (Run), else a token lookup (SeatByToken)
	room  string // the run's room
	key   string
	seat  *parley.Seat // SeatByToken's answer
	found *parley.Run  // Run's answer
	err   error
	done  chan struct{}
}

// lookup queues o on the store's lookups and waits for its answer.
func (s *Store) lookup(ctx context.Context, o *lookupOp) (*lookupOp, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o.ctx, o.done = ctx, make(chan struct{})
	s.lookups.add("", o, maxLookupBatch, s.runLookups)
	select {
	case <-o.done:
		return o, o.err
	case <-ctx.Done():
		// The batch answers it all the same, for nobody.
		return nil, ctx.Err()
	}
}

// SeatByToken returns the seat whose token hashes to hash, revoked or not. ENOTFOUND.
func (s *Store) SeatByToken(ctx context.Context, hash []byte) (*parley.Seat, error) {
	if len(hash) == 0 {
		return nil, sqlstore.NoSuchToken()
	}
	o, err := s.lookup(ctx, &lookupOp{key: string(hash)})
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

// Run returns one run. ENOTFOUND.
func (s *Store) Run(ctx context.Context, room, id string) (*parley.Run, error) {
	o, err := s.lookup(ctx, &lookupOp{run: true, room: room, key: id})
	if err != nil {
		return nil, err
	}
	if o.found == nil {
		return nil, sqlstore.RunNotFound(room, id)
	}
	r := *o.found
	return &r, nil
}

// lookupGroup is the live lookups of a batch that one statement answers: the token lookups,
// or one room's run lookups; each key once in keys.
type lookupGroup struct {
	run  bool
	room string
	ops  []*lookupOp
	keys []string
	seen map[string]bool
}

// args are the group's statement and its arguments: its keys padded (inList), after the room
// for runs.
func (g *lookupGroup) args() (string, []any) {
	if g.run {
		args := padded([]any{g.room}, g.keys, func(k string) any { return k })
		return runQueries[len(args)-1], args
	}
	args := padded(nil, g.keys, func(k string) any { return []byte(k) })
	return tokenQueries[len(args)], args
}

// read answers the group's ops from its statement's rows, or with err.
func (g *lookupGroup) read(rows pgx.Rows, err error) error {
	seats := map[string]*parley.Seat{}
	runs := map[string]*parley.Run{}
	if err == nil {
		for rows.Next() {
			if g.run {
				r, serr := sqlstore.ScanRun(rows)
				if serr != nil {
					err = serr
					break
				}
				runs[r.ID] = r
				continue
			}
			st, serr := sqlstore.ScanSeat(rows)
			if serr != nil {
				err = serr
				break
			}
			seats[string(st.TokenHash)] = st
		}
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	what := "seat by token"
	if g.run {
		what = "run"
	}
	for _, o := range g.ops {
		o.seat, o.found = seats[o.key], runs[o.key]
		if err != nil {
			o.seat, o.found, o.err = nil, nil, fmt.Errorf("%s: %w", what, err)
		}
	}
	return err
}

// runLookups answers a batch of lookups, of tokens and of any room's runs: each group (the
// tokens; each room's runs) in one statement, and every statement in one round trip. The
// statements only read, each from a snapshot taken as it starts. When one fails, the ones after
// it in the round trip do not run, and each of those runs again alone, so that only the lookups
// of the statement PostgreSQL refused (a run id it cannot take as text) get its error.
func (s *Store) runLookups(_ string, batch []*lookupOp) {
	defer closeAll(batch)
	var groups []*lookupGroup
	for _, o := range batch {
		if err := o.ctx.Err(); err != nil {
			o.err = err
			continue
		}
		i := slices.IndexFunc(groups, func(g *lookupGroup) bool { return g.run == o.run && g.room == o.room })
		if i < 0 {
			i = len(groups)
			groups = append(groups, &lookupGroup{run: o.run, room: o.room, seen: map[string]bool{}})
		}
		g := groups[i]
		g.ops = append(g.ops, o)
		if !g.seen[o.key] {
			g.seen[o.key] = true
			g.keys = append(g.keys, o.key)
		}
	}
	ctx := context.Background()
	alone := func(g *lookupGroup) {
		q, args := g.args()
		rows, err := s.pool.Query(ctx, q, args...)
		g.read(rows, err)
	}
	if len(groups) == 1 {
		alone(groups[0])
		return
	}
	if len(groups) == 0 {
		return
	}
	b := &pgx.Batch{}
	for _, g := range groups {
		q, args := g.args()
		b.Queue(q, args...)
	}
	br := s.pool.SendBatch(ctx, b)
	for i, g := range groups {
		rows, err := br.Query()
		if g.read(rows, err) != nil {
			br.Close()
			for _, h := range groups[i+1:] {
				alone(h)
			}
			return
		}
	}
	br.Close()
}

func closeAll(batch []*lookupOp) {
	for _, o := range batch {
		close(o.done)
	}
}
