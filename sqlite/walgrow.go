package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
//
// The growth must never be what fills a disk: a WAL that took the last free blocks would leave
// none for the database file to grow into when a checkpoint copies the WAL back, and every
// post would fail as if the disk were full. So Open grows the WAL only where the file system
// has warmFree times the growth free (320 MB for 40), and logs why when it does not; and if the
// growth fails all the same, a TRUNCATE checkpoint gives back what it took (Open empties the
// WAL before it grows it, so there is nothing to copy into the database then, which a full
// disk could not take).

// WarmWAL tells Open to grow the WAL to its working size (about 40 MiB) before the first
// commit, where the file system has eight times that free, as `parley serve` does; see
// walgrow.go. It costs Open some 130 ms, and the disk space that the WAL takes anyway under a
// steady load.
func WarmWAL() Option { return func(s *Store) { s.warmWAL = true } }

// warmFree is how many times the growth the file system must have free for Open to grow the WAL.
const warmFree = 8

// fsFree reports the free space of a directory's file system (freeBytes; a variable for the
// tests).
var fsFree = freeBytes

// warmPages is how many pages growWAL writes for a ckptLimit of limit: the WAL starts again
// once it holds the limit, but the committer's estimate runs up to a third short
// (TestCheckpointer), so the file grows a quarter past it.
func warmPages(limit int) int64 { return int64(limit) * 5 / 4 }

// walFileSize is the size of the -wal file holding n frames of pageSize bytes.
func walFileSize(n, pageSize int64) int64 { return 32 + n*(pageSize+24) }

// growWAL makes the -wal file at least as long as warmPages(ckptLimit) frames need, unless it
// is already, or the file system has too little space free for it (then skipped says why).
func (s *Store) growWAL(ctx context.Context) (skipped string, err error) {
	wal := s.path + "-wal"
	conn, err := s.write.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	var cache, page int64
	if err := conn.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&cache); err != nil {
		return "", err
	}
	if err := conn.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&page); err != nil {
		return "", err
	}
	want := walFileSize(warmPages(s.ckptLimit), page)
	if st, err := os.Stat(wal); err == nil {
		if st.Size() >= want {
			return "", nil
		}
	}
	free, ok := fsFree(filepath.Dir(wal))
	if !ok {
		return "the file system's free space is unknown", nil
	}
	if free < warmFree*uint64(want) {
		return fmt.Sprintf("the file system has %d MB free, under %d times the %d MB it would take", free>>20, warmFree, want>>20), nil
	}
	// Empty the WAL first (the migrations' pages go into the database), so that should the
	// growth fail, the WAL holds nothing committed and can be cut to nothing without copying.
	if err := truncateWAL(ctx, conn); err != nil {
		return "", err
	}
	if _, err := conn.ExecContext(ctx, `PRAGMA cache_size = 16`); err != nil {
		return "", err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA cache_size = `+strconv.FormatInt(cache, 10))
	// The last pages of the blob are still in the cache when it rolls back, never written: 64
	// pages more than the growth covers them.
	if err := spillRolledBack(ctx, conn, (warmPages(s.ckptLimit)+64)*(page-4)); err != nil {
		// Whatever the WAL grew by before the failure (a disk that filled meanwhile) is given
		// back: it holds nothing committed (emptied above), so the checkpoint copies nothing
		// and cuts the file to nothing.
		if cerr := truncateWAL(context.WithoutCancel(ctx), conn); cerr != nil {
			err = errors.Join(err, fmt.Errorf("give the WAL's growth back: %w", cerr))
		}
		return "", err
	}
	f, err := os.Open(wal)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return "", fmt.Errorf("sync %s: %w", wal, err)
	}
	return "", nil
}

// truncateWAL copies every frame of the WAL into the database and cuts the -wal file to
// nothing (a TRUNCATE checkpoint), or fails if another connection's reads kept it from that.
func truncateWAL(ctx context.Context, conn *sql.Conn) error {
	var busy, frames, copied int
	if err := conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &frames, &copied); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if busy != 0 {
		return errors.New("checkpoint: another connection is reading the WAL")
	}
	return nil
}

// spillRolledBack writes n bytes of zeros into a table it creates, in a transaction it rolls
// back: with a small page cache, SQLite spills the pages to the WAL on the way.
func spillRolledBack(ctx context.Context, conn *sql.Conn, n int64) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE parley_warm_wal (b BLOB)`); err != nil {
		return err
	}
	// The blob's overflow pages hold page-4 bytes each (the table's root and the schema's page
	// come on top).
	if _, err := tx.ExecContext(ctx, `INSERT INTO parley_warm_wal VALUES (zeroblob(?))`, n); err != nil {
		return err
	}
	return tx.Rollback()
}
