// Package sqlite is the room server's embedded store: one SQLite file (modernc.org/sqlite, pure
// Go) in WAL mode with synchronous=FULL, so an acknowledged post survives a crash or power loss.
// Beside it, PATH-search holds the full-text index, derived from the messages and rebuilt from
// them when missing or out of step (searchfile.go).
//
// Every write goes through one connection whose transactions begin IMMEDIATE: writers are
// serialised in this process by the connection and across processes by SQLite's write lock,
// which is what makes per-room seq allocation gapless without retries. Reads use a separate
// pool of query-only connections that WAL lets run alongside the writer.
//
// Times are kept as microseconds since the Unix epoch, in UTC: the precision PostgreSQL
// keeps, so both stores return identical times for the same input. Watch is in-process only;
// one SQLite file is served by one server process.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/fanout"
	"github.com/parleyhq/parley/internal/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

var _ parley.Store = (*Store)(nil)

// Store is a parley.Store on one SQLite database file.
type Store struct {
	sqlstore.Tables // reads on r, writes on w

	path        string
	write       *sql.DB    // one connection; transactions BEGIN IMMEDIATE
	read        *sql.DB    // a pool of query_only connections
	w, r        *stmtCache // prepared statements of write and read
	watch       *fanout.Hub
	seats       *fanout.Seats
	seatCache   seatCache       // seats read, for Seat and SeatByToken (seatcache.go)
	dedup       dedupMemory     // the latest messages of each seat, for dedup (dedup.go)
	runs        runCache        // each room's runs, for Run (runcache.go)
	seqs        seqMemory       // each room's last seq, for the committer (seq.go)
	seatIdx     seatIndexMemory // each room's messages without their seat_index entries, for the committer (seatindex.go)
	search      *searchIndex    // the search index, in a file of its own (searchfile.go)
	noSearch    bool            // no search index (for a benchmark of what it costs)
	warmWAL     bool            // Open grows the WAL first (walgrow.go)
	searchIdle  time.Duration   // searchIdle, but for tests
	searchChunk int             // searchChunk, but for tests
	idleAfter   time.Duration   // how long the committer waits for a write before its idle work
	commitWait  time.Duration   // how long the committer holds a batch for posts on their way (group.go)
	coming      atomic.Int64    // posts announced on their way to the committer (PostsComing)
	log         *slog.Logger
	once        sync.Once // Close
	err         error     // of Close

	// The committer (group.go): appends and stats share transactions and fsyncs.
	raw           rawStmts // the committer's statements on the writer's connection (rawtx.go)
	rtx           rawTx    // the committer's transaction, reused batch after batch
	ops           chan *txOp
	quit          chan struct{}
	committerDone chan struct{}
	ckptWritten   int           // pages (estimated) since the checkpointer's last copy (checkpoint.go)
	walPages      int           // pages (estimated) since the WAL last started again
	ckptLimit     int           // ckptLimit, but for tests
	ckptDue       bool          // the committer checkpoints when next idle
	ckptIdled     bool          // the idle timer had the checkpointer copy, no batch since
	commits       atomic.Int64  // the committer's batches, twice: odd while one runs
	ckptSeen      int64         // the checkpointer's copies whose report walPages took in
	ckpt          *checkpointer // copies the WAL beside the committer (checkpoint.go)
	ckptFrames    atomic.Int64  // frames the last checkpoint had copied (for the tests)
	stats         commitStats   // what the committer has done (CommitStats)
}

// busyTimeout is how long a statement waits for another process's write lock before it fails
// with SQLITE_BUSY. Appends are short; five seconds covers a checkpoint on a slow disk.
const busyTimeout = 5 * time.Second

// Open opens (creating if needed) the database at path and brings its schema up to date.
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	if path == "" || strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("open sqlite: path %q must be a file name without '?'", path)
	}
	// Messages are private to their room: a new database file, and the -wal and -shm files
	// that SQLite creates with the same mode, are readable by the owner only.
	if f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		f.Close()
	} else if !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	// The pragmas run on every new connection. journal_mode=WAL is persistent in the file;
	// synchronous, foreign_keys and busy_timeout are per connection.
	common := "_pragma=busy_timeout(" + strconv.FormatInt(busyTimeout.Milliseconds(), 10) + ")" +
		"&_pragma=foreign_keys(1)&_pragma=synchronous(FULL)"
	// The committer checkpoints when idle; SQLite's own checkpoint is the backstop (checkpoint.go).
	write, err := sql.Open("sqlite", path+"?_txlock=immediate&_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint("+
		strconv.Itoa(ckptBackstop)+")&"+common)
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	write.SetConnMaxIdleTime(0)

	s := &Store{path: path, write: write, watch: fanout.New(), seats: fanout.NewSeats(), searchIdle: searchIdle, searchChunk: searchChunk, idleAfter: idleAfter, commitWait: DefaultCommitWait,
		ckptLimit: ckptLimit, log: slog.Default()}
	s.dedup.seed = maphash.MakeSeed()
	for _, o := range opts {
		o(s)
	}
	if err := sqlstore.Migrate(ctx, sqlDB{write}, dialect{}, migrations, createMigrations); err != nil {
		write.Close()
		return nil, err
	}

	if !s.noSearch {
		var id string
		if err := write.QueryRowContext(ctx, `SELECT id FROM database_id`).Scan(&id); err != nil {
			write.Close()
			return nil, fmt.Errorf("open sqlite %s: database_id: %w", path, err)
		}
		if s.search, err = openSearch(ctx, path, id, s.seqs.on, s.searchChunk, s.searchIdle, s.log); err != nil {
			write.Close()
			return nil, fmt.Errorf("open sqlite %s: %w", path, err)
		}
	}

	read, err := sql.Open("sqlite", path+"?_pragma=query_only(1)&"+common)
	if err != nil {
		s.search.close()
		write.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	read.SetMaxOpenConns(n)
	read.SetMaxIdleConns(n)
	if err := read.PingContext(ctx); err != nil {
		read.Close()
		s.search.close()
		write.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	s.read = read
	s.w, s.r = newStmtCache(write), newStmtCache(read)
	s.Tables = sqlstore.New(s.r, s.w, dialect{})
	for _, q := range appendQueries {
		if _, err := s.w.get(ctx, q); err != nil {
			s.w.close()
			read.Close()
			s.search.close()
			write.Close()
			return nil, fmt.Errorf("open sqlite %s: prepare: %w", path, err)
		}
	}
	if err := s.startCheckpointer(path + "?" + common); err != nil {
		s.w.close()
		read.Close()
		s.search.close()
		write.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	if s.warmWAL {
		// An optimisation only: a WAL that is not grown here is grown by the commits.
		if skipped, err := s.growWAL(ctx); err != nil {
			s.log.Warn("could not warm the WAL; commits will grow it", "db", path, "err", err)
		} else if skipped != "" {
			s.log.Info("the WAL is not warmed; commits will grow it", "db", path, "why", skipped)
		}
	}
	s.startCommitter()
	return s, nil
}

// WithLogger sets where the Store reports what it does on its own: building the search index
// again, or a failure of the indexer that a search then retries. The default is slog.Default().
func WithLogger(l *slog.Logger) Option { return func(s *Store) { s.log = l } }

// Close closes the database and every Watch channel.
func (s *Store) Close() error {
	s.once.Do(func() {
		s.stopCommitter()
		// The indexer after the committer, so that it indexes every message committed.
		searchErr := s.search.close()
		ckptErr := s.stopCheckpointer()
		s.closeRaw()
		s.watch.Close()
		s.seats.Close()
		s.w.close()
		s.r.close()
		if err := errors.Join(searchErr, ckptErr, s.read.Close(), s.write.Close()); err != nil {
			s.err = fmt.Errorf("close sqlite %s: %w", s.path, err)
		}
	})
	return s.err
}

const createMigrations = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    INTEGER NOT NULL PRIMARY KEY,
	name       TEXT    NOT NULL,
	applied_at INTEGER NOT NULL
) STRICT`

// toMicros converts a time.Time to the stored integer (sqlstore reads it back).
func toMicros(t time.Time) int64 { return t.UnixMicro() }

// sqliteCode returns the extended result code of a SQLite error, or 0.
func sqliteCode(err error) int {
	var e *sqlite.Error
	if errors.As(err, &e) {
		return e.Code()
	}
	return 0
}

func isUnique(err error) bool {
	c := sqliteCode(err)
	return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

func isForeignKey(err error) bool {
	return sqliteCode(err) == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
}

// dialect is SQLite's sqlstore.Dialect.
type dialect struct{}

func (dialect) Time(t time.Time) any      { return toMicros(t) }
func (dialect) Unique(err error) bool     { return isUnique(err) }
func (dialect) ForeignKey(err error) bool { return isForeignKey(err) }

// sqlDB is a *sql.DB or *sql.Tx as a sqlstore.DB, its statements unprepared: for migrations,
// whose scripts hold several statements.
type sqlDB struct {
	db interface {
		QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
		QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
		ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	}
}

func (d sqlDB) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return d.db.QueryRowContext(ctx, query, args...)
}

func (d sqlDB) Query(ctx context.Context, query string, args []any, each func(sqlstore.Row) error) error {
	rows, err := d.db.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	return eachRow(rows, each)
}

func (d sqlDB) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	return rowsAffected(d.db.ExecContext(ctx, query, args...))
}

// Tx runs fn in a transaction of the writer (sqlstore.Migrations).
func (d sqlDB) Tx(ctx context.Context, fn func(tx sqlstore.DB) error) error {
	db, ok := d.db.(*sql.DB)
	if !ok {
		return errors.New("sqlite: nested transaction")
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(sqlDB{tx}); err != nil {
		return err
	}
	return tx.Commit()
}

// eachRow calls each for every row of rows, and closes them.
func eachRow(rows *sql.Rows, each func(sqlstore.Row) error) error {
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

func rowsAffected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
