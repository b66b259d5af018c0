package sqlite

import (
	"database/sql"
	"io/fs"
	"path/filepath"
	"testing"
)

// TestPragmas checks that both the writer and the readers run with the settings durability
// and correctness rest on.
func TestPragmas(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	for name, db := range map[string]*sql.DB{"write": s.write, "read": s.read} {
		for pragma, want := range map[string]string{
			"journal_mode": "wal",
			"synchronous":  "2", // FULL
			"foreign_keys": "1",
			"busy_timeout": "5000",
		} {
			var got string
			if err := db.QueryRow("PRAGMA " + pragma).Scan(&got); err != nil {
				t.Fatalf("%s: PRAGMA %s: %v", name, pragma, err)
			}
			if got != want {
				t.Errorf("%s connection: %s = %s, want %s", name, pragma, got, want)
			}
		}
	}
	var qo string
	if err := s.read.QueryRow("PRAGMA query_only").Scan(&qo); err != nil || qo != "1" {
		t.Errorf("read connection: query_only = %s, %v, want 1", qo, err)
	}
	// The search file: derived data, so synchronous=NORMAL is enough (searchfile.go).
	for pragma, want := range map[string]string{"journal_mode": "wal", "synchronous": "1", "busy_timeout": "5000"} {
		var got string
		if err := s.search.write.QueryRow("PRAGMA " + pragma).Scan(&got); err != nil || got != want {
			t.Errorf("search file writer: %s = %s, %v; want %s", pragma, got, err, want)
		}
	}
	if err := s.search.read.QueryRow("PRAGMA query_only").Scan(&qo); err != nil || qo != "1" {
		t.Errorf("search file reader: query_only = %s, %v, want 1", qo, err)
	}
	var versions int
	files, _ := fs.Glob(migrations, "migrations/*.sql")
	if err := s.read.QueryRow("SELECT count(*) FROM schema_migrations").Scan(&versions); err != nil || versions != len(files) || versions < 2 {
		t.Errorf("schema_migrations rows = %d, %v, want one per migration file (%d)", versions, err, len(files))
	}
}
