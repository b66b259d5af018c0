// Package postgres is the room server's store on PostgreSQL (github.com/jackc/pgx/v5), for
// several `parley serve` processes sharing one database behind a load balancer.
//
// Append allocates the room's next seq with UPDATE rooms … RETURNING last_seq in its own
// transaction. That locks the room's row until commit, so appends to one room are serialised
// across every process and the seqs stay gapless: a transaction that fails rolls its seq back
// with it. The idempotency and dedup checks run after the lock, in the same transaction, so
// two processes cannot both accept the same post; unique indexes back them up. A batch of
// plain appends runs them just before instead, and stores only when, under the lock, no
// message of its seats has been stored since (group.go, parley_append_batch): the same
// guarantee.
//
// Lock ordering: an Append locks exactly one rooms row first, then the asks rows of that room
// it closes. No transaction locks two rooms, so appends cannot deadlock each other. Inserting
// a seat, run or stat takes only a KEY SHARE lock on the room (foreign key), which does not
// conflict with the seq update.
//
// Watch is LISTEN/NOTIFY: Append sends NOTIFY parley_append '<seq> <room>' in its transaction,
// which PostgreSQL delivers on commit to every listening process. Each Store holds one
// dedicated listening connection and fans notifications out to its in-process watchers. It
// pings that connection after 30 seconds of quiet; after losing it, it reconnects and wakes
// every watcher with its room's current seq, since notifications sent meanwhile are lost.
//
// Seat changes travel the same way: RevokeSeat and SetSeatToken send NOTIFY parley_seat
// '<room> <seat>' in their statement, so that WatchSeats on every process learns at once that
// a token stopped working; after a reconnect the listener sends the zero SeatChange ("check
// every seat"), since changes sent meanwhile are lost.
//
// Times are timestamptz: microseconds, returned in UTC.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/fanout"
	"github.com/parleyhq/parley/internal/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

var _ parley.Store = (*Store)(nil)

// channel is the NOTIFY channel of appends.
const channel = "parley_append"

// seatChannel is the NOTIFY channel of revocations and rotations.
const seatChannel = "parley_seat"

// listenPing is how long the listening connection may stay quiet before the Store checks that
// it is still alive; the traffic also keeps idle-connection timeouts of firewalls at bay.
var listenPing = 30 * time.Second

// migrationLock is the advisory lock key that serialises migrations of several processes
// starting at once ("parley" in ASCII).
const migrationLock = 0x7061726c6579

// Store is a parley.Store on a PostgreSQL database.
type Store struct {
	sqlstore.Tables // reads and writes on pool

	pool    *pgxpool.Pool
	listen  *pgx.ConnConfig // for the dedicated LISTEN connection
	watch   *fanout.Hub
	seats   *fanout.Seats // revocations and rotations, for WatchSeats
	log     *slog.Logger
	ping    time.Duration // listenPing when opened
	stop    context.CancelFunc
	done    chan struct{}          // closed when the listener has returned
	groups  roomBatches[*groupOp]  // appends waiting for their room's batch (group.go)
	rates   roomBatches[*rateOp]   // rate takes waiting for their room's batch (rates.go)
	lookups roomBatches[*lookupOp] // token and run lookups waiting for a batch, under "" (lookups.go)

	commitWait time.Duration  // the bound of the commit wait (commitwait.go)
	warmConns  int            // connections Open waits for (warm.go)
	migrated   atomic.Bool    // Open has brought the schema up to date (warm.go)
	comingMu   sync.Mutex     // guards coming
	coming     map[string]int // posts announced on their way to each room's Append (PostsComing)

	aheadAgain atomic.Int64 // batches checked ahead of the lock that ran again the usual way (group.go)
}

// Option configures Open.
type Option func(*Store)

// WithLogger sets where the Store reports trouble it recovers from by itself, such as losing
// its listening connection. The default is slog.Default().
func WithLogger(l *slog.Logger) Option { return func(s *Store) { s.log = l } }

// Open connects to the database named by dsn (a URL or keyword/value string, as libpq takes
// them), brings its schema up to date and starts listening for appends.
func Open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		cfg.ConnConfig.RuntimeParams["application_name"] = "parley" // for pg_stat_activity
	}
	s := &Store{listen: cfg.ConnConfig.Copy(), watch: fanout.New(), seats: fanout.NewSeats(), log: slog.Default(), ping: listenPing, done: make(chan struct{}),
		commitWait: DefaultCommitWait}
	for _, o := range opts {
		o(s)
	}
	warm := s.warmConfig(cfg, dsn)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	s.pool = pool
	s.Tables = sqlstore.New(pgDB{pool}, pgDB{pool}, dialect{})
	s.groups.hold, s.groups.holdFor = s.commitWait, s.comingTo
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	s.awaitWarm(ctx, warm)
	// LISTEN before Open returns: a Watch started after Open sees every later append.
	conn, err := s.connectListener(ctx)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	lctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	go s.listenLoop(lctx, conn)
	return s, nil
}

// Close stops the listener, closes the pool and every Watch channel.
func (s *Store) Close() error {
	s.stop()
	<-s.done
	s.pool.Close()
	s.watch.Close()
	s.seats.Close()
	return nil
}

// migrate applies the embedded migrations that the database has not seen (sqlstore.Migrate),
// holding an advisory lock so that processes starting together do not race.
func (s *Store) migrate(ctx context.Context) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(migrationLock)); err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	defer conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, int64(migrationLock))

	return sqlstore.Migrate(ctx, pgDB{conn.Conn()}, dialect{}, migrations, createMigrations)
}

const createMigrations = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    integer     NOT NULL PRIMARY KEY,
	name       text        NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now()
)`

func (s *Store) connectListener(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, s.listen.Copy())
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	// The appends' LISTEN last, so that pg_stat_activity shows the connection by it.
	for _, ch := range []string{seatChannel, channel} {
		if _, err := conn.Exec(ctx, "LISTEN "+ch); err != nil {
			conn.Close(context.Background())
			return nil, fmt.Errorf("listen: %w", err)
		}
	}
	return conn, nil
}

// listenLoop fans notifications out to watchers until ctx ends, reconnecting with backoff.
func (s *Store) listenLoop(ctx context.Context, conn *pgx.Conn) {
	defer close(s.done)
	backoff := 100 * time.Millisecond
	for {
		if conn == nil {
			c, err := s.connectListener(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				s.log.Warn("postgres: cannot listen for appends; retrying", "err", err, "in", backoff)
				select {
				case <-ctx.Done():
					return
				case <-time.After(backoff):
				}
				backoff = min(2*backoff, 5*time.Second)
				continue
			}
			conn, backoff = c, 100*time.Millisecond
			s.catchUp(ctx)
		}
		wctx, cancel := context.WithTimeout(ctx, s.ping)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		if err != nil && ctx.Err() == nil && wctx.Err() != nil {
			// Quiet for a while: a connection that a firewall or NAT dropped silently
			// would wait forever, so prove this one alive. pgx keeps a connection open
			// after a timeout, and buffers notifications that arrive during the ping.
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err = conn.Ping(pctx)
			cancel()
			if err == nil {
				continue
			}
		}
		if err != nil {
			conn.Close(context.Background())
			conn = nil
			if ctx.Err() != nil {
				return
			}
			s.log.Warn("postgres: lost the connection listening for appends; reconnecting", "err", err)
			continue
		}
		if n.Channel == seatChannel {
			if room, seat, ok := strings.Cut(n.Payload, " "); ok {
				s.seats.Publish(parley.SeatChange{Room: room, Seat: seat})
			}
			continue
		}
		if seq, room, ok := parsePayload(n.Payload); ok {
			s.watch.Publish(room, seq)
		}
	}
}

// catchUp wakes every watcher with its room's last seq, and has every seat watcher check
// every seat, covering notifications missed while the listener was disconnected.
func (s *Store) catchUp(ctx context.Context) {
	s.seats.Publish(parley.SeatChange{})
	for _, room := range s.watch.Watched() {
		seq, err := s.LastSeq(ctx, room)
		if err != nil {
			if ctx.Err() == nil && parley.ErrorCode(err) != parley.ENOTFOUND {
				s.log.Warn("postgres: catching up watchers", "room", room, "err", err)
			}
			continue
		}
		s.watch.Publish(room, seq)
	}
}

func payload(room string, seq int64) string { return strconv.FormatInt(seq, 10) + " " + room }

func parsePayload(p string) (seq int64, room string, ok bool) {
	n, room, ok := strings.Cut(p, " ")
	if !ok {
		return 0, "", false
	}
	seq, err := strconv.ParseInt(n, 10, 64)
	return seq, room, err == nil
}

// Codes of the PostgreSQL errors we turn into caller errors.
const (
	uniqueViolation     = "23505"
	foreignKeyViolation = "23503"
)

func sqlState(err error) string {
	var e *pgconn.PgError
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// dialect is PostgreSQL's sqlstore.Dialect.
type dialect struct{}

func (dialect) Time(t time.Time) any      { return t }
func (dialect) Unique(err error) bool     { return sqlState(err) == uniqueViolation }
func (dialect) ForeignKey(err error) bool { return sqlState(err) == foreignKeyViolation }

// pgDB is a pool, connection or transaction as a sqlstore.DB.
type pgDB struct {
	db interface {
		QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
		Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
		Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
		Begin(ctx context.Context) (pgx.Tx, error)
	}
}

func (d pgDB) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return d.db.QueryRow(ctx, query, args...)
}

func (d pgDB) Query(ctx context.Context, query string, args []any, each func(sqlstore.Row) error) error {
	rows, err := d.db.Query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (d pgDB) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := d.db.Exec(ctx, query, args...)
	return tag.RowsAffected(), err
}

// Tx runs fn in a transaction (sqlstore.Migrations).
func (d pgDB) Tx(ctx context.Context, fn func(tx sqlstore.DB) error) error {
	return pgx.BeginFunc(ctx, d.db, func(tx pgx.Tx) error { return fn(pgDB{tx}) })
}
