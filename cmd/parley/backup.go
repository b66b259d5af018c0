package main

import (
	"context"
	"fmt"
	"time"

	"github.com/parleyhq/parley/sqlite"
)

const backupDescription = `
Write a consistent copy of a SQLite database to OUT, while the server keeps running: the copy
is a snapshot (SQLite's VACUUM INTO) holding every post acknowledged before the backup began,
compacted, in one file with nothing beside it, readable by its owner only. The backup reads
the database the way the server's readers do; it needs no lock the server holds and makes no
post wait. OUT must not exist: a backup never overwrites a file.

The copy is checked (quick_check) and counted before the command says it is done.

To restore: stop the server, move the database and its -wal and -shm files aside, copy the
backup to the database's path, and start the server again. The search index (the -search
file beside the database) is not in the backup: the server checks it against the restored
database when it starts and builds it again from the messages when it does not match. A backup is a whole server's
rooms; to move one room between servers (also between SQLite and PostgreSQL), use
'parley export' and 'parley import'.

PostgreSQL keeps its own tools for this: pg_dump (a consistent copy while the servers run)
and pg_restore.

The database is --db, else $PARLEY_DB, else sqlite:parley.db, as for 'parley serve'.`

const backupExamples = `  parley backup parley-$(date +%F).db
  parley backup --db sqlite:/var/lib/parley/parley.db /backups/parley-$(date +%F).db`

func runBackup(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "backup", "backup [--db sqlite:PATH] OUT", backupDescription, backupExamples)
	db := fs.String("db", "", "database: sqlite:PATH or a bare PATH (default $PARLEY_DB, else sqlite:parley.db)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErrorf("want OUT, the file to write, got %d argument(s)", len(pos))
	}
	*db = serveSetting(*db, e.getenv("PARLEY_DB"), "sqlite:parley.db")
	kind, path, err := parseDB(*db)
	if err != nil {
		return err
	}
	if kind != "sqlite" {
		return usageErrorf("--db %s is PostgreSQL: back it up with pg_dump (consistent while the servers run), or move rooms with 'parley export' and 'parley import'", kind)
	}
	start := time.Now()
	info, err := sqlite.Backup(ctx, path, pos[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "backed up %s to %s: %d room(s), %d message(s), %d bytes, in %s\n",
		path, pos[0], info.Rooms, info.Messages, info.Bytes, time.Since(start).Round(time.Millisecond))
	return nil
}
