package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// One SQLite file is served by one server process: Watch, the rate limiters and the read
// marks live in that process, and a second server on the same file would hand out sequence
// numbers its neighbour's readers never hear of. `parley serve` therefore holds an exclusive
// lock on PATH.lock, beside the database, for as long as it runs, with its pid written in
// the file so that the refusal can say who holds it. The lock is the kernel's (flock): it
// ends with the process, however the process ends, so a server that was killed leaves
// nothing behind that blocks the next start.

// lockDB locks the SQLite database at path for this process, or says which process holds
// it. release ends the lock (exiting does too).
func lockDB(path string) (release func(), err error) {
	// Two spellings of one file (a symlink, ./x and x) must meet at one lock file.
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	lockPath := path + ".lock"
	f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock the SQLite database: %w", err)
	}
	held, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock the SQLite database with %s: %w", lockPath, err)
	}
	if held {
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		holder := "another process"
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n]))); err == nil && pid > 0 {
			holder = fmt.Sprintf("another parley serve (pid %d)", pid)
		}
		return nil, fmt.Errorf("the SQLite database %s is in use: %s serves it (and holds %s)\nhint: one SQLite file is served by one process: stop that server first, or give this one another --db; to run several servers on one database, use PostgreSQL",
			path, holder, lockPath)
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() {
		f.Truncate(0) // the pid of a stopped server would only mislead
		f.Close()
	}, nil
}
