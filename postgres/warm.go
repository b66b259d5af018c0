package postgres

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A server's first requests would otherwise wait for its connections. pgxpool dials lazily:
// the first requests each start a connection, and PostgreSQL a backend for it, while the others
// queue, and each new connection then prepares every statement on its first use of it. On this
// project's bench machine, twenty seats sending a first request each at once to two servers
// just started had their last answer after 157–172 ms, against 48–66 ms with the connections
// made and their statements prepared beforehand (a lint each, which reads the seat's token;
// 14–19 ms on SQLite).
//
// WithWarmConns has the pool keep a number of connections open (its MinConns) and Open wait
// for them, and every connection the pool makes prepare the statements of a post's path as it
// opens (AfterConnect): what a server wants. A library user who opens a Store for a few queries
// keeps the lazy pool.

// DefaultWarmConns is what `parley serve` asks WithWarmConns for: pgxpool's default pool size
// on small machines (4), which is also the most a batch of each kind uses at once here.
const DefaultWarmConns = 4

// warmWait bounds how long Open waits for the warm connections; past it, Open returns and the
// pool goes on making them in the background.
const warmWait = 10 * time.Second

// WithWarmConns has the pool keep at least n connections open (at most its pool_max_conns;
// pool_min_conns in the DSN sets the number instead), Open return once they are open, and
// each connection prepare the statements of a post's path when it opens.
func WithWarmConns(n int) Option { return func(s *Store) { s.warmConns = max(n, 0) } }

// warmConfig sets up cfg for s.warmConns and returns how many connections Open should wait
// for: none when warming is off.
func (s *Store) warmConfig(cfg *pgxpool.Config, dsn string) int {
	if s.warmConns == 0 {
		return 0
	}
	if !strings.Contains(dsn, "pool_min_conns") {
		cfg.MinConns = int32(min(s.warmConns, int(cfg.MaxConns)))
	}
	next := cfg.AfterConnect
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		if next != nil {
			if err := next(ctx, conn); err != nil {
				return err
			}
		}
		if s.migrated.Load() {
			s.prepare(ctx, conn)
		}
		return nil
	}
	return int(cfg.MinConns)
}

// prepare prepares warmQueries on conn, each under its own text as name, which pgx then uses
// for that text. A statement that fails to prepare is left to be prepared on its first use,
// as without warming: the connection stays usable.
func (s *Store) prepare(ctx context.Context, conn *pgx.Conn) {
	for _, q := range warmQueries() {
		if _, err := conn.Prepare(ctx, q, q); err != nil {
			s.log.Warn("postgres: could not prepare a statement ahead of its first use", "err", err)
			return
		}
	}
}

// awaitWarm runs once the schema is in place: it waits until the pool holds n idle connections
// (or warmWait has passed), then prepares the statements on the ones opened before the schema
// was (the pool starts making its connections as it is created, before Open migrates; those
// made from now on prepare them as they open).
func (s *Store) awaitWarm(ctx context.Context, n int) {
	s.migrated.Store(true)
	if n == 0 {
		return
	}
	deadline := time.Now().Add(warmWait)
	for s.pool.Stat().IdleConns() < int32(n) {
		if time.Now().After(deadline) {
			s.log.Warn("postgres: the pool's connections are not all open yet; serving meanwhile", "open", s.pool.Stat().TotalConns(), "want", n)
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(2 * time.Millisecond):
		}
	}
	for _, c := range s.pool.AcquireAllIdle(ctx) {
		s.prepare(ctx, c.Conn()) // pgx answers a statement already prepared without a round trip
		c.Release()
	}
}

// warmQueries are the statements of a post's path: the token and run lookups of every batch
// size, the rate takes and give-back, the early dedup check, and the append's lock, checks and
// inserts. Preparing runs nothing.
func warmQueries() []string {
	qs := []string{qTakeRates, qTakeRate, qGiveRate, qCheck, qLock, qPeek, qChecks, qAppendBatch, qInsertMessagesSeq, qInsertMessages, qInsertMessage, qLastSeq, qAddStats}
	for n := 1; n <= maxLookupBatch; n *= 2 {
		qs = append(qs, tokenQueries[n], runQueries[n])
	}
	return qs
}
