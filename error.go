package parley

import (
	"errors"
	"fmt"
)

// Error codes. Each edge maps them in one table: HTTP status in http/, tool errors in mcp/,
// exit codes in cmd/parley.
const (
	EINVALID      = "invalid"      // the request or message is malformed (HTTP 400/422)
	EUNAUTHORIZED = "unauthorized" // no, bad or revoked token (401)
	EFORBIDDEN    = "forbidden"    // a valid token acting outside its room or role (403)
	ENOTFOUND     = "not_found"    // no such room, seat, run or route (404)
	ECONFLICT     = "conflict"     // already exists, or a repeated message (409)
	ETOOLARGE     = "too_large"    // body over the room's size cap (413)
	ERATELIMIT    = "rate_limited" // over a rate cap (429)
	ESTORAGEFULL  = "storage_full" // the server's disk is full; nothing was stored (507)
	EINTERNAL     = "internal"     // our fault; the detail is logged, never shown
)

// Error is parley's one error type. Message is for the user and says what is wrong; Hint says
// how to fix it. Fields carries extra, code-specific values for the edges to expose (for a
// duplicate: "seq"; for a rate cap: "retry_after" in seconds; for a validation failure:
// "diagnostics").
type Error struct {
	Code    string
	Message string
	Hint    string
	Fields  map[string]any
}

func (e *Error) Error() string {
	if e.Hint != "" {
		return fmt.Sprintf("%s: %s (%s)", e.Code, e.Message, e.Hint)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithHint sets the hint and returns e.
func (e *Error) WithHint(format string, args ...any) *Error {
	e.Hint = fmt.Sprintf(format, args...)
	return e
}

// With sets one extra field and returns e.
func (e *Error) With(key string, value any) *Error {
	if e.Fields == nil {
		e.Fields = map[string]any{}
	}
	e.Fields[key] = value
	return e
}

// StorageFullHint is what every edge tells a caller whose request met a full disk.
const StorageFullHint = "the server's disk is full; nothing was stored; try again once its operator has freed space"

// StorageFull is the error of a request that the store could not carry out because its disk
// (or database) is full. The cause is for the log; the caller learns only what happened.
func StorageFull() *Error {
	return &Error{Code: ESTORAGEFULL, Message: "the server could not store anything: its storage is full", Hint: StorageFullHint}
}

// StorageFullDetector is implemented by stores that can tell a full disk from their driver's
// errors (SQLite's SQLITE_FULL, PostgreSQL's SQLSTATE 53100).
type StorageFullDetector interface {
	StorageFull(err error) bool
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL for any other
// non-nil error, and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	if e, ok := err.(*Error); ok {
		return e.Code // the common case, without errors.As's search (and its allocation)
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the user-facing message of err: the *Error's message, or
// "internal error" for anything else (whose detail is for the log only).
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}
