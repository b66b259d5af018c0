package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"time"
)

// CommitFloor measures SQLite's single-commit floor in dir: a new file in WAL mode with
// synchronous=FULL, as the store's, takes transactions one after the other, each inserting one
// row of size bytes and committing it (every commit waits for its fsync of the WAL): n/4 to
// warm up, then n timed. It returns the commits per second of the n; the file is removed. This is what a server that committed
// each post alone could reach at best on that disk; group commit (group.go) shares one commit,
// and its fsync, among the posts waiting at the same moment, and so can go past it.
func CommitFloor(ctx context.Context, dir string, n, size int) (perSecond float64, err error) {
	if n < 1 || size < 0 {
		return 0, fmt.Errorf("commit floor: %d commits of %d bytes", n, size)
	}
	f, err := os.CreateTemp(dir, "parley-commit-floor-*.db")
	if err != nil {
		return 0, fmt.Errorf("commit floor: %w", err)
	}
	path := f.Name()
	f.Close()
	defer func() {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if rerr := os.Remove(path + suffix); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
				err = fmt.Errorf("commit floor: %w", rerr)
			}
		}
	}()
	db, err := sql.Open("sqlite", floorDSN(path))
	if err != nil {
		return 0, fmt.Errorf("commit floor: %w", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE TABLE floor (id INTEGER PRIMARY KEY, body BLOB NOT NULL)`); err != nil {
		return 0, fmt.Errorf("commit floor: %w", err)
	}
	ins, err := db.PrepareContext(ctx, `INSERT INTO floor (body) VALUES (?)`)
	if err != nil {
		return 0, fmt.Errorf("commit floor: %w", err)
	}
	defer ins.Close()
	body := make([]byte, size)
	rand.Read(body) // as incompressible as a post; SQLite does not compress, but the disk may
	// A warm-up, untimed: a new file's first commits grow it and its WAL, which the commits
	// of a store in use (whose WAL is written over after each checkpoint) mostly do not.
	warm := max(n/4, 1)
	var start time.Time
	for i := range warm + n {
		if i == warm {
			start = time.Now()
		}
		// Outside a transaction, each INSERT is one: it commits before it returns.
		if _, err := ins.ExecContext(ctx, body); err != nil {
			return 0, fmt.Errorf("commit floor: %w", err)
		}
	}
	took := time.Since(start)
	var rows int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM floor`).Scan(&rows); err != nil {
		return 0, fmt.Errorf("commit floor: %w", err)
	}
	if rows != warm+n {
		return 0, fmt.Errorf("commit floor: %d rows after %d commits", rows, warm+n)
	}
	return float64(n) / took.Seconds(), nil
}

// floorDSN is the commit floor's data source: WAL, synchronous=FULL, as the store's writer.
func floorDSN(path string) string {
	return path + "?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)"
}
