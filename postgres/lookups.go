package postgres

import (
	"context"
	"fmt"

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
	st := *o.seat // each caller its own copy: callers may keep and change it
	return &st, nil
}

// runTokens answers a batch of token lookups with one statement.
func (s *Store) runTokens(_ string, batch []*lookupOp) {
	defer closeAll(batch)
	ops, keys := live(batch)
	if len(ops) == 0 {
		return
	}
	hashes := make([][]byte, len(keys))
	for i, k := range keys {
		hashes[i] = []byte(k)
	}
	found := make(map[string]*parley.Seat, len(keys))
	err := pgDB{s.pool}.Query(context.Background(), `SELECT `+sqlstore.SeatColumns+` FROM seats WHERE token_hash = ANY($1)`,
		[]any{hashes}, func(row sqlstore.Row) error {
			st, err := sqlstore.ScanSeat(row)
			if err == nil {
				found[string(st.TokenHash)] = st
			}
			return err
		})
	for _, o := range ops {
		o.seat, o.err = found[o.key], err
		if err != nil {
			o.err = fmt.Errorf("seat by token: %w", err)
		}
	}
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
	defer closeAll(batch)
	ops, ids := live(batch)
	if len(ops) == 0 {
		return
	}
	found := make(map[string]*parley.Run, len(ids))
	err := pgDB{s.pool}.Query(context.Background(), `SELECT `+sqlstore.RunColumns+` FROM runs WHERE room = $1 AND id = ANY($2)`,
		[]any{room, ids}, func(row sqlstore.Row) error {
			r, err := sqlstore.ScanRun(row)
			if err == nil {
				found[r.ID] = r
			}
			return err
		})
	for _, o := range ops {
		o.run, o.err = found[o.key], err
		if err != nil {
			o.err = fmt.Errorf("run: %w", err)
		}
	}
}

func closeAll(batch []*lookupOp) {
	for _, o := range batch {
		close(o.done)
	}
}
