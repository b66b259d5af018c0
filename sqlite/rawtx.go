package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"time"
	"unsafe"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/sqlstore"
)

// The committer's transactions run on the writer's driver connection itself
// (sql.Conn.Raw), not through database/sql's Tx. A query in a Tx makes database/sql start a
// goroutine that watches the transaction's context until the rows close, and wrap every
// statement, argument and row in its own structures: for the few short statements of an
// append, more work than SQLite's own. The committer is the only goroutine that uses these
// statements and it holds the connection for the whole batch, so nothing here needs a lock.

// rawConn is what the driver's connection offers.
type rawConn interface {
	driver.ConnPrepareContext
	driver.ConnBeginTx
	driver.ExecerContext
	driver.QueryerContext
}

// rawStmts are the statements the committer prepared on one driver connection.
type rawStmts struct {
	conn  any // the driver connection they were prepared on
	stmts map[string]driver.Stmt
}

// forConn returns the prepared statements of conn, forgetting those of an earlier
// connection (database/sql replaces a connection that went bad).
func (r *rawStmts) forConn(conn any) {
	if r.conn != conn {
		r.conn, r.stmts = conn, map[string]driver.Stmt{}
	}
}

// close closes the statements; the connection must still be open.
func (r *rawStmts) close() {
	for _, st := range r.stmts {
		st.Close()
	}
	r.conn, r.stmts = nil, nil
}

// rawTx is one transaction of the committer.
type rawTx struct {
	ctx   context.Context
	conn  rawConn
	stmts *rawStmts
	args  []driver.NamedValue // reused for each statement's arguments
	dest  []driver.Value      // reused for each row
	b     batch               // what the batch leaves for the end of its transaction
	// writes counts the statements run that may change the database (exec, execMessage,
	// wrote), so that the committer can tell a write that failed before changing anything.
	writes int
}

// wrote notes a statement that may change the database, run other than by exec.
func (t *rawTx) wrote() { t.writes++ }

// stmt returns query's statement, preparing it (its $N made ?, see anonymous) on first use.
func (t *rawTx) stmt(query string) (driver.Stmt, error) {
	if st := t.stmts.stmts[query]; st != nil {
		return st, nil
	}
	st, err := t.conn.PrepareContext(t.ctx, anonymous(query))
	if err != nil {
		return nil, err
	}
	t.stmts.stmts[query] = st
	return st, nil
}

// bind converts args as database/sql would (driver.DefaultParameterConverter: named string
// and integer types to their base types, driver.Valuer), numbered from 1.
func (t *rawTx) bind(args []any) ([]driver.NamedValue, error) {
	t.args = t.args[:0]
	for i, a := range args {
		v, err := driver.DefaultParameterConverter.ConvertValue(a)
		if err != nil {
			return nil, fmt.Errorf("argument $%d: %w", i+1, err)
		}
		t.args = append(t.args, driver.NamedValue{Ordinal: i + 1, Value: v})
	}
	return t.args, nil
}

func (t *rawTx) exec(query string, args ...any) (driver.Result, error) {
	t.writes++
	st, err := t.stmt(query)
	if err != nil {
		return nil, err
	}
	nv, err := t.bind(args)
	if err != nil {
		return nil, err
	}
	return st.(driver.StmtExecContext).ExecContext(t.ctx, nv)
}

// control runs a statement that begins or ends the transaction (prepared, as exec, but not
// counted among the writes).
func (t *rawTx) control(query string) error {
	st, err := t.stmt(query)
	if err != nil {
		return err
	}
	_, err = st.(driver.StmtExecContext).ExecContext(t.ctx, nil)
	return err
}

// queryRow runs query and keeps its first row for Scan.
func (t *rawTx) queryRow(query string, args ...any) *rawRow {
	st, err := t.stmt(query)
	if err != nil {
		return &rawRow{err: err}
	}
	nv, err := t.bind(args)
	if err != nil {
		return &rawRow{err: err}
	}
	rows, err := st.(driver.StmtQueryContext).QueryContext(t.ctx, nv)
	if err != nil {
		return &rawRow{err: err}
	}
	return firstRow(rows, t.dest)
}

// query runs query unprepared and calls each for every row.
func (t *rawTx) query(query string, args []any, each func(*rawRow) error) error {
	nv, err := t.bind(args)
	if err != nil {
		return err
	}
	rows, err := t.conn.QueryContext(t.ctx, query, nv)
	if err != nil {
		return err
	}
	defer rows.Close()
	dest := make([]driver.Value, len(rows.Columns()))
	for {
		if err := rows.Next(dest); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		if err := each(&rawRow{vals: dest}); err != nil {
			return err
		}
	}
}

// firstRow reads the first row of rows, closing them.
func firstRow(rows driver.Rows, dest []driver.Value) *rawRow {
	defer rows.Close()
	n := len(rows.Columns())
	if cap(dest) < n {
		dest = make([]driver.Value, n)
	}
	dest = dest[:n]
	switch err := rows.Next(dest); {
	case err == io.EOF:
		return &rawRow{err: sql.ErrNoRows}
	case err != nil:
		return &rawRow{err: err}
	}
	// The driver's bytes are valid until the next call on rows: Scan copies them, but it
	// runs after Close, so they are copied here.
	for i, v := range dest {
		if b, ok := v.([]byte); ok {
			dest[i] = append([]byte(nil), b...)
		}
	}
	return &rawRow{vals: dest}
}

// rawRow is one row, or the error of the query that should have returned it.
type rawRow struct {
	vals []driver.Value
	err  error
}

// Scan assigns the row's values to dest as database/sql's Row.Scan does, for the
// destinations this package's queries use: an sql.Scanner, *int64, *int, *string, *[]byte,
// *bool, *float64, *time.Time and *any.
func (r *rawRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	if len(dest) != len(r.vals) {
		return fmt.Errorf("sql: expected %d destination arguments in Scan, not %d", len(r.vals), len(dest))
	}
	for i, d := range dest {
		if err := assign(d, r.vals[i]); err != nil {
			return fmt.Errorf("sql: Scan error on column index %d: %w", i, err)
		}
	}
	return nil
}

var errNullInto = errors.New("converting NULL")

func assign(dest any, v driver.Value) error {
	if s, ok := dest.(sql.Scanner); ok {
		return s.Scan(v)
	}
	switch d := dest.(type) {
	case *int64:
		switch x := v.(type) {
		case int64:
			*d = x
			return nil
		case nil:
			return fmt.Errorf("%w to int64", errNullInto)
		}
	case *int:
		switch x := v.(type) {
		case int64:
			*d = int(x)
			return nil
		case nil:
			return fmt.Errorf("%w to int", errNullInto)
		}
	case *string:
		switch x := v.(type) {
		case string:
			*d = x
			return nil
		case []byte:
			*d = string(x)
			return nil
		case nil:
			return fmt.Errorf("%w to string", errNullInto)
		}
	case *[]byte:
		switch x := v.(type) {
		case []byte:
			*d = append([]byte(nil), x...)
			return nil
		case string:
			*d = []byte(x)
			return nil
		case nil:
			*d = nil
			return nil
		}
	case *bool:
		if x, ok := v.(int64); ok {
			*d = x != 0
			return nil
		}
	case *float64:
		switch x := v.(type) {
		case float64:
			*d = x
			return nil
		case int64:
			*d = float64(x)
			return nil
		}
	case *time.Time:
		if x, ok := v.(time.Time); ok {
			*d = x
			return nil
		}
	case *any:
		if b, ok := v.([]byte); ok {
			v = append([]byte(nil), b...)
		}
		*d = v
		return nil
	}
	return fmt.Errorf("unsupported Scan, storing driver.Value type %T into type %T", v, dest)
}

// closeRaw closes the committer's statements, once it has stopped.
func (s *Store) closeRaw() {
	if s.raw.stmts == nil {
		return
	}
	conn, err := s.write.Conn(context.Background())
	if err != nil {
		return
	}
	defer conn.Close()
	conn.Raw(func(dc any) error {
		if dc == s.raw.conn {
			s.raw.close()
		}
		return nil
	})
}

// execMessage runs sqlstore.QueryInsertMessage for m under seq, notes its notes as
// sqlstore.MarshalNotes encodes them, its arguments bound straight
// into the driver's values (the values and their order are sqlstore.MessageArgs'). It saves
// what MessageArgs and bind cost per append: the []any, each value's conversion, and a copy
// of the body, which the driver copies into SQLite anyway (it never keeps the slice).
func (t *rawTx) execMessage(m *parley.Message, seq int64, notes string) error {
	t.writes++
	st, err := t.stmt(sqlstore.QueryInsertMessage)
	if err != nil {
		return err
	}
	var hash, key driver.Value // NULL, as sqlstore.NullBytes and NullString
	if len(m.Hash) > 0 {
		hash = m.Hash
	}
	if m.IdempotencyKey != "" {
		key = m.IdempotencyKey
	}
	body := []byte{} // an empty body is an empty blob; a nil slice would be NULL
	if m.Body != "" {
		body = unsafe.Slice(unsafe.StringData(m.Body), len(m.Body))
	}
	vals := [...]driver.Value{m.Room, seq, m.Seat, toMicros(m.Time), m.Format, m.Topic, m.Intent, m.Re,
		body, int64(m.Tokens), hash, notes, key}
	t.args = t.args[:0]
	for i, v := range vals {
		t.args = append(t.args, driver.NamedValue{Ordinal: i + 1, Value: v})
	}
	_, err = st.(driver.StmtExecContext).ExecContext(t.ctx, t.args)
	return err
}
