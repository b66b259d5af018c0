package sqlite

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
)

// TestCommitFloor runs the single-commit floor in a directory of its own: it reports a rate,
// leaves no file behind, and refuses what it cannot measure.
func TestCommitFloor(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	rate, err := CommitFloor(ctx, dir, 50, 200)
	if err != nil {
		t.Fatal(err)
	}
	if rate <= 0 {
		t.Errorf("rate %f", rate)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("files left behind: %v", left)
	}
	if _, err := CommitFloor(ctx, filepath.Join(dir, "missing"), 5, 200); err == nil {
		t.Error("a missing directory gave no error")
	}
	if _, err := CommitFloor(ctx, dir, 0, 200); err == nil {
		t.Error("0 commits gave no error")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := CommitFloor(cctx, dir, 5, 200); err == nil {
		t.Error("a cancelled context gave no error")
	}
}

// TestCommitFloorDurability checks that the floor's connection runs as the store's writer
// does: WAL, synchronous=FULL (2), so that each of its commits waits for an fsync.
func TestCommitFloorDurability(t *testing.T) {
	db, err := sql.Open("sqlite", floorDSN(filepath.Join(t.TempDir(), "f.db")))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var journal string
	var synchronous int
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&journal); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`PRAGMA synchronous`).Scan(&synchronous); err != nil {
		t.Fatal(err)
	}
	if journal != "wal" || synchronous != 2 {
		t.Errorf("journal_mode %q, synchronous %d; want wal and 2 (FULL)", journal, synchronous)
	}
}
