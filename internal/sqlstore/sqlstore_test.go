package sqlstore

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	_ "modernc.org/sqlite"
)

func TestTimeCol(t *testing.T) {
	at := time.Date(2026, 9, 19, 12, 0, 0, 123456000, time.UTC)
	for _, src := range []any{at.UnixMicro(), at.In(time.FixedZone("x", 3600))} {
		var c timeCol
		if err := c.Scan(src); err != nil || !c.valid || !c.t.Equal(at) || c.t.Location() != time.UTC {
			t.Errorf("Scan(%T) = %v (%v), valid %v, %v; want %v in UTC", src, c.t, c.t.Location(), c.valid, err, at)
		}
		if p := c.ptr(); p == nil || !p.Equal(at) {
			t.Errorf("ptr after Scan(%T) = %v", src, p)
		}
	}
	c := timeCol{at, true}
	if err := c.Scan(nil); err != nil || c.valid || !c.t.IsZero() || c.ptr() != nil {
		t.Errorf("Scan(nil) = %+v, %v; want the zero time, not valid", c, err)
	}
	if err := c.Scan("2026"); err == nil {
		t.Error("Scan(string) succeeded")
	}
}

// testDB is a *sql.DB or *sql.Tx of a real SQLite database as Migrations.
type testDB struct {
	db interface {
		QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
		ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	}
}

func (d testDB) QueryRow(ctx context.Context, query string, args ...any) Row {
	return d.db.QueryRowContext(ctx, query, args...)
}

func (d testDB) Query(context.Context, string, []any, func(Row) error) error {
	panic("Migrate does not query rows")
}

func (d testDB) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := d.db.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (d testDB) Tx(ctx context.Context, fn func(DB) error) error {
	tx, err := d.db.(*sql.DB).BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(testDB{tx}); err != nil {
		return err
	}
	return tx.Commit()
}

type micros struct{}

func (micros) Time(t time.Time) any      { return t.UnixMicro() }
func (micros) Unique(err error) bool     { return false }
func (micros) ForeignKey(err error) bool { return false }

const createTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

// TestMigrate runs migrations on a real SQLite database: each once, in version order, a failed
// one not recorded and its statements undone, a newer database refused.
func TestMigrate(t *testing.T) {
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	files := fstest.MapFS{
		"migrations/0002_more.sql": file(`ALTER TABLE a ADD COLUMN y INTEGER; INSERT INTO a (x, y) VALUES (2, 2);`),
		"migrations/0001_init.sql": file(`CREATE TABLE a (x INTEGER); INSERT INTO a (x) VALUES (1);`),
	}
	for range 2 { // the second run finds everything applied
		if err := Migrate(ctx, testDB{db}, micros{}, files, createTable); err != nil {
			t.Fatalf("Migrate: %v", err)
		}
	}
	var rows, versions int
	if err := db.QueryRow(`SELECT count(*) FROM a`).Scan(&rows); err != nil || rows != 2 {
		t.Fatalf("table a has %d rows, %v; want 2 (each migration once)", rows, err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM schema_migrations WHERE applied_at > 0`).Scan(&versions); err != nil || versions != 2 {
		t.Fatalf("%d migrations recorded, %v; want 2", versions, err)
	}

	files["migrations/0003_bad.sql"] = file(`INSERT INTO a (x) VALUES (3); INSERT INTO nosuch VALUES (1);`)
	if err := Migrate(ctx, testDB{db}, micros{}, files, createTable); err == nil || !strings.Contains(err.Error(), "0003_bad.sql") {
		t.Fatalf("Migrate with a failing migration: %v, want its error naming it", err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM a`).Scan(&rows); err != nil || rows != 2 {
		t.Fatalf("after the failed migration table a has %d rows, %v; want 2 (undone)", rows, err)
	}
	delete(files, "migrations/0003_bad.sql")

	files["migrations/x_nonumber.sql"] = file(`SELECT 1`)
	if err := Migrate(ctx, testDB{db}, micros{}, files, createTable); err == nil || !strings.Contains(err.Error(), "does not start with a version number") {
		t.Fatalf("Migrate with an unnumbered file: %v", err)
	}
	delete(files, "migrations/x_nonumber.sql")

	if _, err := db.Exec(`INSERT INTO schema_migrations VALUES (9, 'migrations/0009_future.sql', 0)`); err != nil {
		t.Fatal(err)
	}
	if err := Migrate(ctx, testDB{db}, micros{}, files, createTable); err == nil || !strings.Contains(err.Error(), "version 9, newer than this parley knows (2)") {
		t.Fatalf("Migrate of a newer database: %v", err)
	}
}
