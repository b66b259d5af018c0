package sqlite

import sqlite3 "modernc.org/sqlite/lib"

// StorageFull reports whether err is SQLite's SQLITE_FULL ("database or disk is full": the
// disk ran out, or the database reached its max_page_count), so that the service can answer
// "storage full" instead of "internal error" (parley.StorageFullDetector). The primary code
// is the low byte of the extended one.
func (s *Store) StorageFull(err error) bool {
	c := sqliteCode(err)
	return c != 0 && c&0xff == sqlite3.SQLITE_FULL
}
