package sqlstore

import (
	"context"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Migrations is a store's side of Migrate: statements on one connection, and transactions on
// that connection.
type Migrations interface {
	DB
	// Tx runs fn in a transaction and commits it if fn returns nil, else rolls it back.
	Tx(ctx context.Context, fn func(tx DB) error) error
}

// Migrate applies the migrations in files (migrations/NNNN_name.sql) that the database has
// not recorded in schema_migrations, each in its own transaction together with its row, in
// version order. createTable is the store's CREATE TABLE IF NOT EXISTS schema_migrations with
// the columns version, name and applied_at. A database at a version newer than files knows is
// refused: it may hold what this parley would misread. Where processes may migrate one
// database at once, the store holds a lock around Migrate (PostgreSQL: an advisory lock);
// SQLite's write lock, taken by each transaction, is enough there.
func Migrate(ctx context.Context, db Migrations, d Dialect, files fs.FS, createTable string) error {
	if _, err := db.Exec(ctx, createTable); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	names, err := fs.Glob(files, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	sort.Strings(names)
	versions := make([]int, len(names))
	known := 0
	for i, name := range names {
		if versions[i], err = migrationVersion(name); err != nil {
			return err
		}
		known = max(known, versions[i])
	}
	var current int
	if err := db.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if current > known {
		return fmt.Errorf("migrate: the database schema is at version %d, newer than this parley knows (%d): run a newer parley", current, known)
	}
	for i, name := range names {
		if err := migrateOne(ctx, db, d, files, versions[i], name); err != nil {
			return fmt.Errorf("migrate %s: %w", name, err)
		}
	}
	return nil
}

func migrateOne(ctx context.Context, db Migrations, d Dialect, files fs.FS, version int, name string) error {
	return db.Tx(ctx, func(tx DB) error {
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM schema_migrations WHERE version = $1`, version).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		script, err := fs.ReadFile(files, name)
		if err != nil {
			return err
		}
		// Without arguments both drivers run a script of several statements.
		if _, err := tx.Exec(ctx, string(script)); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
			version, name, d.Time(time.Now()))
		return err
	})
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
