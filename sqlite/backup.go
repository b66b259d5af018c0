package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// BackupInfo is what Backup reports of the copy it wrote.
type BackupInfo struct {
	Rooms    int64
	Messages int64
	Bytes    int64
}

// Backup writes a consistent copy of the database at path to out with VACUUM INTO: a snapshot
// as of one read transaction, so that every post acknowledged before it began is in the copy
// and none is torn, taken while a server keeps writing (WAL lets the read run beside the
// writer; it takes no lock a writer waits on, nor the server's PATH.lock). out must not
// exist: it is created readable by its owner only, as the database is. The copy is compacted
// and a database on its own (no -wal file to carry along), checked (quick_check) and counted
// before Backup returns. A failed backup removes what it wrote of out.
func Backup(ctx context.Context, path, out string) (info BackupInfo, err error) {
	if path == "" || strings.ContainsRune(path, '?') || out == "" {
		return info, fmt.Errorf("backup: give the database path and the file to write")
	}
	if _, err := os.Stat(path); err != nil {
		return info, fmt.Errorf("backup: %w", err)
	}
	f, err := os.OpenFile(out, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return info, fmt.Errorf("backup: %s exists; a backup never overwrites a file: name a new one or remove it first", out)
	}
	if err != nil {
		return info, fmt.Errorf("backup: %w", err)
	}
	f.Close()
	defer func() {
		if err != nil {
			os.Remove(out)
		}
	}()

	// Not Open: it would create a missing file and migrate; a backup only reads. No
	// query_only either: VACUUM INTO writes, though only to out.
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout("+strconv.FormatInt(busyTimeout.Milliseconds(), 10)+")")
	if err != nil {
		return info, fmt.Errorf("backup: open %s: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name IN ('rooms', 'messages', 'schema_migrations')`).Scan(&n); err != nil {
		return info, fmt.Errorf("backup: %s: %w", path, err)
	}
	if n != 3 {
		return info, fmt.Errorf("backup: %s is not a parley database (no rooms, messages and schema_migrations tables)", path)
	}
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, out); err != nil {
		return info, fmt.Errorf("backup: vacuum into %s: %w", out, err)
	}
	db.Close()
	// A backup is for the day the disk dies: it is on disk before Backup says it is done.
	if err := syncFile(out); err != nil {
		return info, fmt.Errorf("backup: sync %s: %w", out, err)
	}

	cp, err := sql.Open("sqlite", out+"?_pragma=query_only(1)")
	if err != nil {
		return info, fmt.Errorf("backup: check %s: %w", out, err)
	}
	defer cp.Close()
	var check string
	if err := cp.QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&check); err != nil {
		return info, fmt.Errorf("backup: check %s: %w", out, err)
	}
	if check != "ok" {
		return info, fmt.Errorf("backup: the copy %s fails its check: %s", out, check)
	}
	if err := cp.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM rooms), (SELECT count(*) FROM messages)`).Scan(&info.Rooms, &info.Messages); err != nil {
		return info, fmt.Errorf("backup: count %s: %w", out, err)
	}
	if st, err := os.Stat(out); err == nil {
		info.Bytes = st.Size()
	}
	return info, nil
}

// syncFile flushes the file at path, and the directory that names it, to disk.
func syncFile(path string) error {
	for _, p := range []string{path, filepath.Dir(path)} {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		err = f.Sync()
		f.Close()
		if err != nil && p == path {
			return err
		}
	}
	return nil
}
