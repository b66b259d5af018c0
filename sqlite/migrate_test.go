package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parleyhq/parley/sqlite"
)

// TestNewerSchema checks that a database migrated by a newer parley is refused, not misread.
func TestNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'migrations/0999_future.sql', 0)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err = sqlite.Open(t.Context(), path)
	if err == nil {
		s.Close()
		t.Fatal("Open accepted a database with a newer schema")
	}
	if !strings.Contains(err.Error(), "version 999, newer than this parley knows") {
		t.Fatalf("Open: %v, want the newer-schema error", err)
	}
}
