package sqlite

import (
	"context"
	"fmt"
	"os"
	"strconv"
)

// A warm WAL. SQLite deletes the -wal file when its last connection closes, so every Open
// starts with an empty one, and until the WAL first starts again from its beginning (after
// the committer's first checkpoint of ckptLimit pages, checkpoint.go) each commit appends to
// the file: its fsync then also writes the file's new size and blocks to the file system's
// journal. A commit written over blocks the file already has is cheaper: 13 pages in a
// commit took 0.31 to 0.33 ms over old blocks against 0.41 to 0.43 ms appended (medians of 300
// commits, 3 alternated pairs, on the development machine's ext4). Under `parley bench server`
// (10,000 posts, whose first quarter or so is appended without it; 6 alternated pairs on a
// busy machine) the warm WAL made the whole run faster in 4 pairs and the first 1,000 posts in
// 5, by 2% and 4% in the medians: a small gain, mostly at the start.
//
// So WarmWAL has Open grow the -wal file to the size it will reach anyway, before the first
// commit. It does so with SQLite's own means: a transaction, with a page cache of a few
// pages, inserts a zero-filled blob of that size into a table it creates, so that SQLite
// spills the pages to the WAL as it goes; then it rolls back. Frames of a transaction that
// never committed are never read (a reader and a recovery stop at the last commit frame), and
// the next commit writes over them from the WAL's start. The file is then synced once, so
// that the first commit does not have to flush the whole of it.

// WarmWAL tells Open to grow the WAL to its working size (about 40 MiB) before the first
// commit, as `parley serve` does; see walgrow.go. It costs Open some 130 ms and the disk space
// that the WAL takes anyway under a steady load.
func WarmWAL() Option { return func(s *Store) { s.warmWAL = true } }

// warmPages is how many pages growWAL writes for a ckptLimit of limit: the WAL starts again
// once it holds the limit, but the committer's estimate runs up to a third short
// (TestCheckpointer), so the file grows a quarter past it.
func warmPages(limit int) int64 { return int64(limit) * 5 / 4 }

// walFileSize is the size of the -wal file holding n frames of pageSize bytes.
func walFileSize(n, pageSize int64) int64 { return 32 + n*(pageSize+24) }

// growWAL makes the -wal file at least as long as warmPages(ckptLimit) frames need, unless it
// is already. It returns the file's size after.
func (s *Store) growWAL(ctx context.Context) (int64, error) {
	wal := s.path + "-wal"
	conn, err := s.write.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	var cache, page int64
	if err := conn.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&cache); err != nil {
		return 0, err
	}
	if err := conn.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&page); err != nil {
		return 0, err
	}
	want := walFileSize(warmPages(s.ckptLimit), page)
	if st, err := os.Stat(wal); err == nil && st.Size() >= want {
		return st.Size(), nil
	}
	if _, err := conn.ExecContext(ctx, `PRAGMA cache_size = 16`); err != nil {
		return 0, err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA cache_size = `+strconv.FormatInt(cache, 10))
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE parley_warm_wal (b BLOB)`); err != nil {
		return 0, err
	}
	// The blob's overflow pages hold page-4 bytes each; a few more pages (the table's root,
	// the schema) come on top.
	if _, err := tx.ExecContext(ctx, `INSERT INTO parley_warm_wal VALUES (zeroblob(?))`, warmPages(s.ckptLimit)*(page-4)); err != nil {
		return 0, err
	}
	if err := tx.Rollback(); err != nil {
		return 0, err
	}
	f, err := os.Open(wal)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("sync %s: %w", wal, err)
	}
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}
