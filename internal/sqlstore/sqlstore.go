// Package sqlstore is what the SQLite and PostgreSQL stores share: the tables' columns and the
// queries that read and write them alike, the scanning of rows into parley types, the coded
// errors a store returns, and the migration runner. A store hands it its connections (DB) and
// its dialect (how it takes a time, how it tells a unique or foreign-key violation), embeds
// Tables for the parley.Store methods that are the same SQL on both, and keeps to itself what
// differs: Append with its group commit, dedup, and notifications.
//
// Queries are written once, with PostgreSQL's $N placeholders, which the SQLite driver
// (modernc.org/sqlite) binds by number too. Errors are plain: a code and a message. The hints
// a user reads are the service's (room/), which knows what the user was trying to do.
//
// A new store method whose SQL is the same on both stores goes into Tables (tables.go); one
// whose SQL differs goes into each store, built from the column lists, scanners and error
// constructors here, its queries in $N form.
package sqlstore

import (
	"context"
	"time"
)

// Row is one row of a result: *sql.Row, *sql.Rows and pgx.Row all have this Scan. The Scan of
// a single-row query that found nothing returns an error that is sql.ErrNoRows (pgx's
// ErrNoRows is too).
type Row interface {
	Scan(dest ...any) error
}

// DB runs statements: a store's pool, one of SQLite's two databases, or a transaction.
type DB interface {
	QueryRow(ctx context.Context, query string, args ...any) Row
	// Query runs query and calls each for every row, in order, until each returns an error.
	Query(ctx context.Context, query string, args []any, each func(Row) error) error
	// Exec runs a statement and returns the number of rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
}

// Dialect is what the stores' SQL and drivers do differently, beyond the queries each keeps.
type Dialect interface {
	// Time is t as the store takes it as an argument: SQLite keeps microseconds since the
	// epoch in an integer, PostgreSQL a timestamptz. Scanning needs no dialect: Time reads
	// either (see timeCol).
	Time(t time.Time) any
	// Unique and ForeignKey tell a unique or foreign-key violation from other errors.
	Unique(err error) bool
	ForeignKey(err error) bool
}

// NullTime is t as an argument, or NULL for the zero time.
func NullTime(d Dialect, t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return d.Time(t)
}

// NullTimePtr is *t as an argument, or NULL for nil. Every instant, the zero time.Time
// included, is a value.
func NullTimePtr(d Dialect, t *time.Time) any {
	if t == nil {
		return nil
	}
	return d.Time(*t)
}

// NullBytes stores an empty hash as NULL, so that seats without a token never collide on the
// unique token index and messages without a hash match no other. It is an untyped nil: both
// drivers bind that as NULL, where an empty []byte may become an empty blob.
func NullBytes(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

// NullString stores "" as NULL (the idempotency key: messages without one never match).
func NullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}
