package postgres

// diskFull is SQLSTATE 53100 (disk_full): PostgreSQL could not extend a file.
const diskFull = "53100"

// StorageFull reports whether err is PostgreSQL's disk_full, so that the service can answer
// "storage full" instead of "internal error" (parley.StorageFullDetector).
func (s *Store) StorageFull(err error) bool { return sqlState(err) == diskFull }
