package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strconv"
	"strings"
	"sync"

	"github.com/parleyhq/parley/internal/sqlstore"
)

// stmtCache prepares each query once per *sql.DB. SQLite spends more time parsing the short
// statements of an append than running them; database/sql then keeps the prepared statement
// per connection. (The committer keeps its own, on the writer's driver connection: rawtx.go.)
type stmtCache struct {
	db *sql.DB
	mu sync.Mutex // guards m
	m  map[string]*sql.Stmt
}

func newStmtCache(db *sql.DB) *stmtCache { return &stmtCache{db: db, m: map[string]*sql.Stmt{}} }

// get returns the prepared statement for query, preparing it on first use. It must not hold
// c.mu while it prepares: on the writer, preparing waits for the one connection, and the
// transaction holding that connection may be waiting in lookup for c.mu (a deadlock that
// wedged every post until its client gave up; see TestStmtCacheNoDeadlock). Two callers may
// then prepare the same query at once; the second keeps the first's statement.
func (c *stmtCache) get(ctx context.Context, query string) (*sql.Stmt, error) {
	if st := c.lookup(query); st != nil {
		return st, nil
	}
	st, err := c.db.PrepareContext(ctx, anonymous(query))
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.m[query]; ok {
		st.Close()
		return prev, nil
	}
	if c.m == nil { // closed meanwhile
		st.Close()
		return nil, sql.ErrConnDone
	}
	c.m[query] = st
	return st, nil
}

// lookup returns the statement if it has been prepared, without preparing it.
func (c *stmtCache) lookup(query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[query]
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.m {
		st.Close()
	}
	c.m = nil
}

// queryRow runs a single-row query with the cached statement; if preparing fails it runs the
// query unprepared, so that the error surfaces from Scan like any other.
//
// A single-row lookup takes microseconds, too short to be worth interrupting; with a context
// that can be cancelled, database/sql starts a goroutine per query to watch it, a sizeable
// part of a lookup's cost. So a context that is not done yet runs without its cancellation
// (its values kept); one that is already done still fails the query.
func (c *stmtCache) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	if ctx.Err() == nil {
		ctx = context.WithoutCancel(ctx)
	}
	st, err := c.get(ctx, query)
	if err != nil {
		return c.db.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

func (c *stmtCache) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := c.get(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (c *stmtCache) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := c.get(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// txStmts runs statements inside one transaction of the committer (rawtx.go).
type txStmts struct{ t *rawTx }

func (t txStmts) queryRow(ctx context.Context, query string, args ...any) *rawRow {
	return t.t.queryRow(query, args...)
}

func (t txStmts) exec(ctx context.Context, query string, args ...any) (driver.Result, error) {
	return t.t.exec(query, args...)
}

// stored records that the write now running stored the room's messages lo to hi, for the
// search index, whose indexer gets them once the batch has committed (searchfile.go). A write
// calls it last, once nothing of it can fail any more: a write that fails changed nothing or
// is rolled back with its batch, and must leave nothing to index.
func (t txStmts) stored(room string, lo, hi int64) { t.t.b.stored(room, lo, hi) }

// QueryRow makes txStmts a querier (duplicate).
func (t txStmts) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return t.t.queryRow(query, args...)
}

// The cache is a sqlstore.DB, of prepared statements: the reader for sqlstore.Tables' reads, the
// writer for its writes.

func (c *stmtCache) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return c.queryRow(ctx, query, args...)
}

func (c *stmtCache) Query(ctx context.Context, query string, args []any, each func(sqlstore.Row) error) error {
	rows, err := c.query(ctx, query, args...)
	if err != nil {
		return err
	}
	return eachRow(rows, each)
}

func (c *stmtCache) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	return rowsAffected(c.exec(ctx, query, args...))
}

// anonymous returns query with its $N placeholders turned into plain ?, when they stand in the
// order 1, 2, 3… once each, as in most of sqlstore's queries; any other query comes back as it
// is. The driver binds $N by number too, but it asks SQLite for the name of every named
// parameter on every execution, a string allocated each time; a plain ? has no name. The
// cache prepares the rewritten query under the original one, so the rewriting is done once.
func anonymous(query string) string {
	var b strings.Builder
	next := 1
	for i := 0; i < len(query); i++ {
		j := i + 1
		for query[i] == '$' && j < len(query) && '0' <= query[j] && query[j] <= '9' {
			j++
		}
		if j == i+1 {
			b.WriteByte(query[i])
			continue
		}
		if n, err := strconv.Atoi(query[i+1 : j]); err != nil || n != next {
			return query
		}
		next++
		b.WriteByte('?')
		i = j - 1
	}
	return b.String()
}
