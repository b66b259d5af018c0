// Package sqlite is the room server's embedded store: one SQLite file (modernc.org/sqlite, pure
// Go) in WAL mode with synchronous=FULL, so an acknowledged post survives a crash or power loss.
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
	"io/fs"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/fanout"
)

//go:embed migrations/*.sql
var migrations embed.FS

var _ parley.Store = (*Store)(nil)

// Store is a parley.Store on one SQLite database file.
type Store struct {
	path  string
	write *sql.DB    // one connection; transactions BEGIN IMMEDIATE
	read  *sql.DB    // a pool of query_only connections
	w, r  *stmtCache // prepared statements of write and read
	watch *fanout.Hub
	seats *fanout.Seats
	once  sync.Once // Close
	err   error     // of Close

	// The committer (group.go): appends and stats share transactions and fsyncs.
	ops           chan *txOp
	quit          chan struct{}
	committerDone chan struct{}
}

// busyTimeout is how long a statement waits for another process's write lock before it fails
// with SQLITE_BUSY. Appends are short; five seconds covers a checkpoint on a slow disk.
const busyTimeout = 5 * time.Second

// Open opens (creating if needed) the database at path and brings its schema up to date.
func Open(ctx context.Context, path string) (*Store, error) {
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
	write, err := sql.Open("sqlite", path+"?_txlock=immediate&_pragma=journal_mode(WAL)&"+common)
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	write.SetConnMaxIdleTime(0)

	s := &Store{path: path, write: write, watch: fanout.New(), seats: fanout.NewSeats()}
	if err := s.migrate(ctx); err != nil {
		write.Close()
		return nil, err
	}

	read, err := sql.Open("sqlite", path+"?_pragma=query_only(1)&"+common)
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	read.SetMaxOpenConns(n)
	read.SetMaxIdleConns(n)
	if err := read.PingContext(ctx); err != nil {
		read.Close()
		write.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	s.read = read
	s.w, s.r = newStmtCache(write), newStmtCache(read)
	for _, q := range appendQueries {
		if _, err := s.w.get(ctx, q); err != nil {
			s.w.close()
			read.Close()
			write.Close()
			return nil, fmt.Errorf("open sqlite %s: prepare: %w", path, err)
		}
	}
	s.startCommitter()
	return s, nil
}

// Close closes the database and every Watch channel.
func (s *Store) Close() error {
	s.once.Do(func() {
		s.stopCommitter()
		s.watch.Close()
		s.seats.Close()
		s.w.close()
		s.r.close()
		if err := errors.Join(s.read.Close(), s.write.Close()); err != nil {
			s.err = fmt.Errorf("close sqlite %s: %w", s.path, err)
		}
	})
	return s.err
}

// migrate applies the embedded migrations that the database has not seen, each in its own
// transaction together with its row in schema_migrations, in file-name order.
func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.write.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER NOT NULL PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at INTEGER NOT NULL
	) STRICT`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	sort.Strings(names)
	known := 0
	for _, name := range names {
		v, err := migrationVersion(name)
		if err != nil {
			return err
		}
		known = max(known, v)
	}
	// A database that a newer parley migrated may hold what this one would misread.
	var current int
	if err := s.write.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if current > known {
		return fmt.Errorf("migrate: the database schema is at version %d, newer than this parley knows (%d): run a newer parley", current, known)
	}
	for _, name := range names {
		version, err := migrationVersion(name)
		if err != nil {
			return err
		}
		if err := s.migrateOne(ctx, version, name); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) migrateOne(ctx context.Context, version int, name string) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate %s: %w", name, err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, version).Scan(&n); err != nil {
		return fmt.Errorf("migrate %s: %w", name, err)
	}
	if n > 0 {
		return nil
	}
	b, err := migrations.ReadFile(name)
	if err != nil {
		return fmt.Errorf("migrate %s: %w", name, err)
	}
	if _, err := tx.ExecContext(ctx, string(b)); err != nil {
		return fmt.Errorf("migrate %s: %w", name, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
		version, name, toMicros(time.Now())); err != nil {
		return fmt.Errorf("migrate %s: %w", name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate %s: %w", name, err)
	}
	return nil
}

// migrationVersion reads the number that starts a migration's file name ("0001_init.sql").
func migrationVersion(name string) (int, error) {
	base := name[strings.LastIndexByte(name, '/')+1:]
	digits, _, ok := strings.Cut(base, "_")
	v, err := strconv.Atoi(digits)
	if !ok || err != nil || v <= 0 {
		return 0, fmt.Errorf("migrate: file %s does not start with a version number and '_'", name)
	}
	return v, nil
}

// toMicros and fromMicros convert between time.Time and the stored integer.
func toMicros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func nullMicros(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: toMicros(t), Valid: true}
}

func fromNullMicros(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return fromMicros(v.Int64)
}

// nullMicrosPtr stores an optional time: NULL for nil. Every instant, the zero time.Time
// included, is a value.
func nullMicrosPtr(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: toMicros(*t), Valid: true}
}

func fromNullMicrosPtr(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMicros(v.Int64)
	return &t
}

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

func roomNotFound(name string) error {
	return parley.Errorf(parley.ENOTFOUND, "room %q not found", name)
}
