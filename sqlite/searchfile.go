package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	sqlite3 "modernc.org/sqlite/lib"
)

// The full-text search index lives in a SQLite file of its own beside the database, PATH-search
// (and its -wal and -shm), written by a goroutine of its own, the indexer, never by the
// committer: indexing a post cost the committer, whose time every post waits for, about a
// fifth of its work (FTS5 splitting the body into terms and writing them). The index is
// derived data: every row of it is made from the messages table, which stays the one truth.
//
// The file holds message_words (FTS5, as migration 0003 defined it, with each row's room and
// seq), search_progress (each room's seq up to which every message is in message_words,
// written in the transaction that indexes them) and search_meta (the id of the database it
// was made from). Its writer attaches the database as msgs, so that one INSERT … SELECT copies
// a room's new messages into the index inside SQLite.
//
// Exactness. After each committed batch the committer notes the rooms it stored messages in
// (committed) and wakes the indexer, which indexes them once a chunk of messages waits or a
// moment after the first (searchChunk, searchIdle), in a transaction per room on its own
// connection. A search first brings its room's index up to the room's last committed message
// (current): a Sole store knows which rooms may be behind (dirty); any other store cannot
// know what another store wrote, so it always catches the room up, which costs one short
// transaction that finds nothing to do when nothing waits. So no search misses a message
// committed before it began, however far behind the indexer is.
//
// Durability. The index is written with synchronous=NORMAL: a power cut may lose the last
// index transactions, each with its own progress row, never one without the other, and Open
// catches up whatever is missing from the messages. A file that cannot be read, was made by
// another format or from another database (search_meta's id is the database's database_id,
// migration 0006), or holds a room further than the database does (a backup restored over the
// database), is deleted and built again from the messages at Open, in the background (the
// first search of a room still waits for that room's share). Damage Open's checks do not reach
// (a page of the index) is met by the first search or index transaction that reads it: the
// file is built again then, the same way (repair), and that search answers from the new file.

// searchSuffix names the search file: the database's path with this appended.
const searchSuffix = "-search"

// searchFormat is the search file's layout (PRAGMA user_version); a file of another is built
// again.
const searchFormat = 1

// searchChunk is how many messages wait before the indexer indexes them; searchIdle is how
// long it waits after the first of them for the rest. FTS5 writes a segment per indexing
// transaction and merges them as they pile up, so larger chunks cost less CPU in all
// (BenchmarkSearchFileIndex, on the shared 2-core test machine: about 55 µs a message in
// chunks of 16, 39 of 64, 29 of 128, 26 of 512, 16-20 of 2048). The wait only delays work
// done in the background: a search catches its room up itself, indexing at most what a
// chunk or the wait lets pile up (a few milliseconds' work).
const (
	searchChunk = 512
	searchIdle  = 100 * time.Millisecond
)

// searchTxMessages bounds the messages one index transaction takes, so that a room built from
// scratch (an upgrade, a rebuilt file) commits its progress as it goes and lets a search of
// another room in between.
const searchTxMessages = 4096

// searchBuildLog is the number of messages waiting at Open from which the store says that it
// builds the index, and again when it has (a variable for the tests).
var searchBuildLog int64 = 20000

const searchSchema = `
CREATE VIRTUAL TABLE IF NOT EXISTS message_words USING fts5(
	room UNINDEXED,
	seq UNINDEXED,
	body,
	content = '',
	contentless_unindexed = 1,
	tokenize = 'unicode61 remove_diacritics 0'
);
CREATE TABLE IF NOT EXISTS search_progress (
	room TEXT    NOT NULL PRIMARY KEY,
	seq  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS search_meta (
	database_id TEXT NOT NULL
) STRICT;
`

// The indexer's statements, on the search file's writer with the database attached as msgs.
const (
	// qProgressLock makes sure the room has a progress row. It comes first in an index
	// transaction: a write, it takes the search file's write lock before anything is read, so
	// that another store indexing the same file cannot interleave, and the transaction never
	// has to turn a read into a write (which WAL may refuse with SQLITE_BUSY_SNAPSHOT).
	qProgressLock = `INSERT INTO search_progress (room, seq) VALUES ($1, 0) ON CONFLICT (room) DO NOTHING`
	qProgressOf   = `SELECT seq FROM search_progress WHERE room = $1`
	// qIndexUpTo is the last seq of the room's next $3 messages after $2, and how many.
	qIndexUpTo = `SELECT coalesce(max(seq), 0), count(*) FROM
		(SELECT seq FROM msgs.messages WHERE room = $1 AND seq > $2 ORDER BY seq LIMIT $3)`
	qIndexRange = `INSERT INTO message_words (room, seq, body)
		SELECT room, seq, CAST(body AS TEXT) FROM msgs.messages WHERE room = $1 AND seq > $2 AND seq <= $3 ORDER BY seq`
	qProgressSet = `UPDATE search_progress SET seq = $2 WHERE room = $1`
	// qSearchBehind lists the rooms with messages after their progress, and how many.
	qSearchBehind = `SELECT name, behind FROM (SELECT r.name,
		coalesce((SELECT max(seq) FROM msgs.messages WHERE room = r.name), 0) -
		coalesce((SELECT seq FROM search_progress WHERE room = r.name), 0) AS behind
		FROM msgs.rooms r) WHERE behind > 0 ORDER BY name`
	// qSearchAhead counts the rooms the index holds further than the database does, or that
	// the database does not hold at all.
	qSearchAhead = `SELECT count(*) FROM search_progress p
		WHERE p.seq > coalesce((SELECT max(seq) FROM msgs.messages WHERE room = p.room), 0)`
)

// searchIndex is the search file and its indexer.
type searchIndex struct {
	path   string // the search file
	dbPath string // the database, attached as msgs
	log    *slog.Logger
	sole   bool          // the store is Sole: dirty knows every room that may be behind
	chunk  int           // searchChunk, but for tests
	idle   time.Duration // searchIdle, but for tests

	write *sql.DB    // one connection on the search file
	read  *sql.DB    // query_only connections on the search file
	r     *stmtCache // statements of read

	mu       sync.Mutex // the writer's connection: one index transaction at a time
	attached any        // the driver connection msgs is attached to

	dmu   sync.Mutex
	dirty map[string]uint64 // room → generation of the last batch that stored messages in it
	gen   uint64

	waiting    atomic.Int64 // messages committed since the indexer last started a round
	building   atomic.Int64 // messages Open found missing, when many: the indexer says when done
	buildStart time.Time    // when Open found them
	failLogged time.Time    // the indexer's last failure logged
	failures   int          // the indexer's failures since
	kick       chan struct{}
	quit       chan struct{}
	done       chan struct{}

	// The files themselves: whatever uses write, read or r holds file shared (before mu), a
	// rebuild alone (fresh). fileGen counts the rebuilds, so that two finders of one damage
	// rebuild once; lost is why write is nil (the store closed, a rebuild failed).
	id      string
	file    sync.RWMutex
	fileGen uint64
	lost    error
}

// openSearch opens the search file of the database at dbPath, whose database_id is id, building
// it again when it cannot be used as it is; the indexer then catches up in the background.
func openSearch(ctx context.Context, dbPath, id string, sole bool, chunk int, idle time.Duration, log *slog.Logger) (*searchIndex, error) {
	x := &searchIndex{path: dbPath + searchSuffix, dbPath: dbPath, log: log, sole: sole, chunk: chunk, idle: idle,
		dirty: map[string]uint64{}, kick: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	x.id = id
	why, err := x.open(ctx, id)
	if err != nil {
		x.closeDBs()
		return nil, err
	}
	if why != "" {
		err = x.fresh(ctx, why)
	} else {
		err = x.findBehind(ctx)
	}
	if err != nil {
		x.closeDBs()
		return nil, err
	}
	go x.run()
	return x, nil
}

// fresh deletes the search file and makes a new one, which the indexer then fills. The caller
// holds file alone, or is Open.
func (x *searchIndex) fresh(ctx context.Context, why string) error {
	x.closeDBs()
	x.log.Warn("search index: building it again from the messages", "file", x.path, "reason", why)
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(x.path + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			x.lost = fmt.Errorf("search index: %w", err)
			return x.lost
		}
	}
	if why, err := x.open(ctx, x.id); err != nil || why != "" {
		x.closeDBs()
		x.lost = fmt.Errorf("search index %s: a new file: %s%w", x.path, why, err)
		return x.lost
	}
	return x.findBehind(ctx)
}

// withFile runs fn holding the search file shared, and returns its error and the file's
// generation it ran on (for repair).
func (x *searchIndex) withFile(fn func() error) (uint64, error) {
	x.file.RLock()
	defer x.file.RUnlock()
	if x.write == nil {
		return x.fileGen, x.lost
	}
	return x.fileGen, fn()
}

// repair tells whether an operation that failed with err on the file of generation gen should
// run again: when SQLite found the file damaged (past what Open checks: a page of the index),
// the first time, once the file is built again. A search then indexes its room afresh, the
// indexer every other room.
func (x *searchIndex) repair(ctx context.Context, gen uint64, err error, attempt int) (again bool, _ error) {
	if err == nil || attempt > 0 || !isDamaged(err) {
		return false, err
	}
	x.file.Lock()
	defer x.file.Unlock()
	if x.write == nil {
		return false, errors.Join(err, x.lost)
	}
	if x.fileGen == gen { // else another caller rebuilt it already
		x.fileGen++
		if ferr := x.fresh(ctx, "the file is damaged: "+err.Error()); ferr != nil {
			return false, errors.Join(err, ferr)
		}
	}
	return true, nil
}

// isDamaged tells whether err is SQLite finding a file it cannot read as a database.
func isDamaged(err error) bool {
	switch sqliteCode(err) & 0xff {
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return true
	}
	return false
}

// open opens the search file, creating it if missing. why says, when not empty, why the file
// cannot serve and must be built again; err is a failure that building again would not cure.
func (x *searchIndex) open(ctx context.Context, id string) (why string, err error) {
	// Private as the messages it indexes, as the database is.
	if f, err := os.OpenFile(x.path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		f.Close()
	} else if !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("search index: %w", err)
	}
	common := "_pragma=busy_timeout(" + strconv.FormatInt(busyTimeout.Milliseconds(), 10) + ")"
	// No _txlock=immediate: BEGIN IMMEDIATE would take the write lock of every attached
	// database, the messages' too (see qProgressLock for how a transaction takes the search
	// file's lock first).
	if x.write, err = sql.Open("sqlite", x.path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&"+common); err != nil {
		return "", fmt.Errorf("search index: %w", err)
	}
	x.write.SetMaxOpenConns(1)
	x.write.SetMaxIdleConns(1)
	x.write.SetConnMaxLifetime(0)
	x.write.SetConnMaxIdleTime(0)
	if x.read, err = sql.Open("sqlite", x.path+"?_pragma=query_only(1)&"+common); err != nil {
		return "", fmt.Errorf("search index: %w", err)
	}
	x.read.SetMaxOpenConns(4)
	x.read.SetMaxIdleConns(4)
	x.r = newStmtCache(x.read)

	x.mu.Lock()
	defer x.mu.Unlock()
	conn, err := x.conn(ctx)
	if err != nil {
		return damaged(err)
	}
	defer conn.Close()
	var format, objects int
	if err := conn.QueryRowContext(ctx, qSearchFormat).Scan(&format, &objects); err != nil {
		return damaged(err)
	}
	if format == 0 && objects == 0 {
		if err := x.create(ctx, conn, id); err != nil {
			return "", err
		}
		if err := conn.QueryRowContext(ctx, qSearchFormat).Scan(&format, &objects); err != nil {
			return damaged(err)
		}
	}
	if format != searchFormat {
		return fmt.Sprintf("the file's format is %d, this parley's %d", format, searchFormat), nil
	}
	var owner string
	if err := conn.QueryRowContext(ctx, `SELECT database_id FROM search_meta`).Scan(&owner); err != nil {
		return damaged(err)
	}
	if owner != id {
		return "the file was made from another database", nil
	}
	var ahead int
	if err := conn.QueryRowContext(ctx, qSearchAhead).Scan(&ahead); err != nil {
		return damaged(err)
	}
	if ahead > 0 {
		return fmt.Sprintf("the file holds messages of %d room(s) that the database does not (a backup restored over it?)", ahead), nil
	}
	return "", nil
}

// qSearchFormat reads the search file's format and how many objects its schema holds.
const qSearchFormat = `SELECT (SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_schema)`

// create makes the empty search file's tables, for the database whose id is id. Another store
// opening the same new file at the same moment may do the same: whichever commits second
// finds everything there.
func (x *searchIndex) create(ctx context.Context, conn *sql.Conn, id string) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("search index: create %s: %w", x.path, err)
	}
	defer tx.Rollback()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{searchSchema, nil},
		{`INSERT INTO search_meta (database_id) SELECT $1 WHERE NOT EXISTS (SELECT 1 FROM search_meta)`, []any{id}},
		{`PRAGMA user_version = ` + strconv.Itoa(searchFormat), nil},
	} {
		if _, err := tx.ExecContext(ctx, q.sql, q.args...); err != nil {
			return fmt.Errorf("search index: create %s: %w", x.path, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("search index: create %s: %w", x.path, err)
	}
	return nil
}

// damaged tells a search file SQLite cannot read as a database (why, to build it again) from
// any other failure (err).
func damaged(err error) (why string, _ error) {
	if isDamaged(err) {
		return "the file is damaged: " + err.Error(), nil
	}
	return "", fmt.Errorf("search index: %w", err)
}

// conn returns the writer's connection, the database attached to it as msgs. The caller holds
// mu, and closes the connection.
func (x *searchIndex) conn(ctx context.Context) (*sql.Conn, error) {
	conn, err := x.write.Conn(ctx)
	if err != nil {
		return nil, err
	}
	err = conn.Raw(func(dc any) error {
		if dc == x.attached {
			return nil
		}
		ex, ok := dc.(driver.ExecerContext)
		if !ok {
			return fmt.Errorf("sqlite: the driver's connection is a %T", dc)
		}
		if _, err := ex.ExecContext(ctx, `ATTACH DATABASE $1 AS msgs`, []driver.NamedValue{{Ordinal: 1, Value: x.dbPath}}); err != nil {
			return fmt.Errorf("attach %s: %w", x.dbPath, err)
		}
		x.attached = dc
		return nil
	})
	if err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// findBehind notes the rooms whose messages the index lacks (after a crash, an upgrade, a file
// built again) for the indexer, which starts on them at once.
func (x *searchIndex) findBehind(ctx context.Context) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	conn, err := x.conn(ctx)
	if err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	defer conn.Close()
	rows, err := conn.QueryContext(ctx, qSearchBehind)
	if err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	defer rows.Close()
	var rooms, total int64
	x.dmu.Lock()
	defer x.dmu.Unlock()
	x.gen++
	for rows.Next() {
		var room string
		var n int64
		if err := rows.Scan(&room, &n); err != nil {
			return fmt.Errorf("search index: %w", err)
		}
		x.dirty[room] = x.gen
		rooms++
		total += n
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	if total == 0 {
		return nil
	}
	if total >= searchBuildLog {
		x.building.Store(total)
		x.buildStart = time.Now()
		x.log.Info("search index: indexing the messages it lacks, in the background (a search waits for its own room's)",
			"file", x.path, "messages", total, "rooms", rooms)
	}
	x.waiting.Add(max(total, int64(x.chunk)))
	select {
	case x.kick <- struct{}{}:
	default: // the indexer is woken already
	}
	return nil
}

// committed notes the rooms a committed batch stored messages in (the committer calls it
// before any write of the batch returns) and wakes the indexer.
func (x *searchIndex) committed(rooms []roomCount) {
	if x == nil || len(rooms) == 0 {
		return
	}
	n := 0
	x.dmu.Lock()
	x.gen++
	for _, r := range rooms {
		x.dirty[r.room] = x.gen
		n += r.n
	}
	x.dmu.Unlock()
	x.waiting.Add(int64(n))
	select {
	case x.kick <- struct{}{}:
	default:
	}
}

// run is the indexer: woken by committed batches, it indexes once a chunk waits or a moment
// after the first message, and what waits when the store closes.
func (x *searchIndex) run() {
	defer close(x.done)
	wait := time.NewTimer(time.Hour)
	wait.Stop()
	for {
		select {
		case <-x.kick:
		case <-x.quit:
			x.indexDirty()
			return
		}
		wait.Reset(x.idle)
	gather:
		for x.waiting.Load() < int64(x.chunk) {
			select {
			case <-x.kick:
			case <-wait.C:
				break gather
			case <-x.quit:
				wait.Stop()
				x.indexDirty()
				return
			}
		}
		wait.Stop()
		x.indexDirty()
	}
}

// indexDirty indexes every room noted as behind. A failure (a full disk, say) is logged and
// the rooms stay noted: the next round, or the room's next search, tries again.
func (x *searchIndex) indexDirty() {
	x.waiting.Store(0)
	x.dmu.Lock()
	rooms := maps.Clone(x.dirty)
	x.dmu.Unlock()
	failed := false
	for _, room := range slices.Sorted(maps.Keys(rooms)) {
		if err := x.catchUp(context.Background(), room, rooms[room]); err != nil {
			failed = true
			// Once a minute at most: a full disk would otherwise log at every round.
			if x.failures++; time.Since(x.failLogged) >= time.Minute {
				x.log.Error("search index: indexing failed; the indexer, and a search of the room, try again",
					"file", x.path, "room", room, "err", err, "failures", x.failures)
				x.failLogged, x.failures = time.Now(), 0
			}
		}
	}
	if n := x.building.Load(); n > 0 && !failed {
		x.building.Store(0)
		x.log.Info("search index: built", "file", x.path, "messages", n, "took", time.Since(x.buildStart).Round(time.Millisecond))
	}
}

// current brings the room's index up to its last message committed before the call.
func (x *searchIndex) current(ctx context.Context, room string) error {
	x.dmu.Lock()
	gen, behind := x.dirty[room]
	x.dmu.Unlock()
	if !behind && x.sole {
		return nil
	}
	if err := x.catchUp(ctx, room, gen); err != nil {
		return fmt.Errorf("search: index %s: %w", room, err)
	}
	return nil
}

// catchUp indexes the room's messages after its progress, in transactions of at most
// searchTxMessages, up to its last message; gen is the room's mark in dirty read before, which
// is taken away if no batch has marked the room since.
func (x *searchIndex) catchUp(ctx context.Context, room string, gen uint64) error {
	for {
		n, err := x.indexRoom(ctx, room, searchTxMessages)
		if err != nil {
			return err
		}
		if n < searchTxMessages {
			break
		}
	}
	x.dmu.Lock()
	if g, ok := x.dirty[room]; ok && g == gen {
		delete(x.dirty, room)
	}
	x.dmu.Unlock()
	return nil
}

// indexRoom indexes, in one transaction, up to limit of the room's messages after its progress,
// and moves the progress to the last of them. It returns how many it indexed. The messages are
// read from one snapshot of the database, taken after the transaction holds the search file's
// write lock.
func (x *searchIndex) indexRoom(ctx context.Context, room string, limit int) (n int, err error) {
	for attempt := 0; ; attempt++ {
		gen, err := x.withFile(func() error {
			n, err = x.indexRoomTx(ctx, room, limit)
			return err
		})
		if again, err := x.repair(ctx, gen, err, attempt); !again {
			return n, err
		}
	}
}

// indexRoomTx is indexRoom's transaction, on the file the caller holds.
func (x *searchIndex) indexRoomTx(ctx context.Context, room string, limit int) (int, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	conn, err := x.conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, qProgressLock, room); err != nil {
		return 0, fmt.Errorf("progress: %w", err)
	}
	var from, to, n int64
	if err := tx.QueryRowContext(ctx, qProgressOf, room).Scan(&from); err != nil {
		return 0, fmt.Errorf("progress: %w", err)
	}
	if err := tx.QueryRowContext(ctx, qIndexUpTo, room, from, limit).Scan(&to, &n); err != nil {
		return 0, fmt.Errorf("messages: %w", err)
	}
	if n == 0 {
		return 0, nil // rolled back: nothing to write
	}
	if _, err := tx.ExecContext(ctx, qIndexRange, room, from, to); err != nil {
		return 0, fmt.Errorf("index: %w", err)
	}
	if _, err := tx.ExecContext(ctx, qProgressSet, room, to); err != nil {
		return 0, fmt.Errorf("progress: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("commit: %w", err)
	}
	return int(n), nil
}

// close indexes what waits, stops the indexer and closes the search file.
func (x *searchIndex) close() error {
	if x == nil {
		return nil
	}
	close(x.quit)
	<-x.done
	x.file.Lock()
	defer x.file.Unlock()
	x.lost = errors.New("search index: the store is closed")
	return x.closeDBs()
}

func (x *searchIndex) closeDBs() error {
	var errs []error
	if x.r != nil {
		x.r.close()
	}
	if x.read != nil {
		errs = append(errs, x.read.Close())
	}
	if x.write != nil {
		errs = append(errs, x.write.Close())
	}
	x.read, x.write, x.r, x.attached = nil, nil, nil, nil
	return errors.Join(errs...)
}
