// Package pgtest gives tests a real PostgreSQL database of their own.
//
// DSN uses the server named by PARLEY_TEST_POSTGRES (a DSN whose user may create databases)
// when it is set; otherwise it starts a private server, once per test binary, from the
// installed binaries (/usr/lib/postgresql/*/bin, or initdb and postgres on PATH) in a temp
// dir, listening on a free loopback port with its unix socket in that dir. initdb refuses to
// run as root, so as root the server runs as the postgres user. Every call to DSN creates a
// fresh database and drops it when the test ends.
//
// Where there is no PostgreSQL at all, DSN skips the test with a message that says how to get
// one, except under PARLEY_TEST_REQUIRE_ALL=1 (as in CI), where it fails.
//
// The private server stops when the test binary exits, even when it is killed: the server
// process gets the kernel's parent-death signal. Main also removes its files; files left by a
// binary that was killed or did not use Main are removed by a later start.
package pgtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvDSN names the environment variable with the DSN of a server to test against.
const EnvDSN = "PARLEY_TEST_POSTGRES"

// EnvRequireAll, set to 1, turns "no PostgreSQL here" from a skip into a failure.
const EnvRequireAll = "PARLEY_TEST_REQUIRE_ALL"

var (
	mu      sync.Mutex // guards the fields below
	started bool
	admin   string  // DSN of the maintenance database, where tests create theirs
	srv     *server // the private server, if we started one
	errNone error   // set when there is no PostgreSQL to start
	errSrv  error   // set when starting the private server failed
)

// DSN returns the DSN of a new, empty database on the test server, dropped with tb.Cleanup:
// a postgres:// URL on the private server, or PARLEY_TEST_POSTGRES (in the form it was given)
// with its database replaced.
// Cleanups run last in, first out, so a store opened on it after the call, and closed with
// tb.Cleanup, is closed before the drop.
func DSN(tb testing.TB) string {
	tb.Helper()
	base, err := adminDSN()
	if errors.Is(err, errNoPostgres) {
		if os.Getenv(EnvRequireAll) == "1" {
			tb.Fatalf("pgtest: %v (required: %s=1)", err, EnvRequireAll)
		}
		tb.Skipf("pgtest: %v", err)
	}
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}

	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	name := "parley_test_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		tb.Fatalf("pgtest: connect to %s: %v", redact(base), err)
	}
	defer conn.Close(context.Background())
	// template0 and the C collation: the same fresh database everywhere, whatever template1
	// holds on a shared server.
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'"); err != nil {
		tb.Fatalf("pgtest: create database: %v", err)
	}
	tb.Cleanup(func() { drop(tb, base, name) })
	dsn, err := withDatabase(base, name)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	return dsn
}

func drop(tb testing.TB, base, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		tb.Logf("pgtest: drop %s: %v", name, err)
		return
	}
	defer conn.Close(context.Background())
	// FORCE (PostgreSQL 13+) ends sessions a test leaked rather than failing the drop.
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		tb.Logf("pgtest: drop %s: %v", name, err)
	}
}

// Main runs the tests and then stops the private server, if one was started, and removes its
// files. Call it from TestMain: func TestMain(m *testing.M) { pgtest.Main(m) }.
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop stops the private server, if one was started. Later calls to DSN start a new one.
func Stop() {
	mu.Lock()
	defer mu.Unlock()
	if srv != nil {
		srv.stop()
	}
	srv, started, admin, errNone, errSrv = nil, false, "", nil, nil
}

var errNoPostgres = errors.New("no PostgreSQL: set " + EnvDSN + " to a DSN, or install PostgreSQL " +
	"(apt-get install -y postgresql) so that initdb and postgres are found under /usr/lib/postgresql/*/bin or on PATH")

func adminDSN() (string, error) {
	mu.Lock()
	defer mu.Unlock()
	if !started {
		started = true
		if dsn := os.Getenv(EnvDSN); dsn != "" {
			admin = dsn
		} else {
			bin, err := findBinaries()
			if err != nil {
				errNone = err
			} else if srv, errSrv = start(bin); errSrv == nil {
				admin = srv.dsn
			}
		}
	}
	switch {
	case errNone != nil:
		return "", errNone
	case errSrv != nil:
		return "", errSrv
	}
	return admin, nil
}

// binGlob finds the Debian and Ubuntu installations; tests point it elsewhere.
var binGlob = "/usr/lib/postgresql/*/bin"

// findBinaries returns the directory holding initdb and postgres: the highest version under
// /usr/lib/postgresql (Debian and Ubuntu), else the one on PATH.
func findBinaries() (string, error) {
	dirs, _ := filepath.Glob(binGlob)
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		d := filepath.Dir(p)
		if isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", errNoPostgres
}

func version(binDir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	return v
}

func isExec(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

type server struct {
	dir  string
	dsn  string
	stop func()
}

// tempPrefix names the temp dirs of private servers.
const tempPrefix = "parley-pgtest-"

// tempBase is where private servers live: the temp dir, unless the postgres user could not
// reach into it (as root, TMPDIR may sit under /root), then /tmp.
func tempBase() string {
	base := os.TempDir()
	if os.Geteuid() != 0 {
		return base
	}
	for d := base; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return "/tmp"
		}
		if d == filepath.Dir(d) {
			return base
		}
	}
}

// removeStale removes the temp dirs that earlier test binaries left behind: those killed, and
// those that called DSN without Main. Their servers have stopped with them (parent-death
// signal) but the files stay.
func removeStale() {
	dirs, _ := filepath.Glob(filepath.Join(tempBase(), tempPrefix+"*"))
	for _, dir := range dirs {
		if b, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid")); err == nil {
			line, _, _ := strings.Cut(string(b), "\n")
			if pid, err := strconv.Atoi(strings.TrimSpace(line)); err == nil && syscall.Kill(pid, 0) != syscall.ESRCH {
				continue // still running
			}
		}
		// The log is created after initdb, just before postgres starts: a dir whose server
		// is not running and whose log is a minute old is done with. Without a log, initdb
		// may still be at work: give it ten minutes.
		fi, err := os.Stat(filepath.Join(dir, "postgres.log"))
		age := time.Minute
		if err != nil {
			fi, err = os.Stat(dir)
			age = 10 * time.Minute
		}
		if err != nil || time.Since(fi.ModTime()) < age {
			continue
		}
		os.RemoveAll(dir)
	}
}

// start runs initdb and postgres from bin in a new temp dir.
func start(bin string) (*server, error) {
	removeStale()
	dir, err := os.MkdirTemp(tempBase(), tempPrefix)
	if err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	fail := func(err error) (*server, error) {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	attr := &syscall.SysProcAttr{}
	if os.Geteuid() == 0 {
		cred, err := postgresUser()
		if err != nil {
			return fail(err)
		}
		attr.Credential = cred
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return fail(err)
		}
	}
	data := filepath.Join(dir, "data")

	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = attr
	initdb.Dir = dir
	if out, err := initdb.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("initdb: %w\n%s", err, out))
	}

	// Another process may take the free port before postgres binds it: try a few.
	var errs []error
	for range 3 {
		srv, err := launch(bin, dir, data, attr)
		if err == nil {
			return srv, nil
		}
		errs = append(errs, err)
	}
	return fail(errors.Join(errs...))
}

// launch starts postgres on the initialised data dir, on a free port, and waits until it
// takes connections.
func launch(bin, dir, data string, attr *syscall.SysProcAttr) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "postgres.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	// Durability is not under test here, speed is welcome: no fsync. Small shared memory,
	// since several test binaries may each run a server on a small machine.
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port), "-k", dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off",
		"-c", "full_page_writes=off", "-c", "shared_buffers=16MB", "-c", "max_connections=200")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Fast shutdown when this process dies. The signal follows the thread that started the
	// child, so that thread is locked to a goroutine that lives as long as the server.
	a := *attr
	a.Pdeathsig = syscall.SIGINT
	a.Setpgid = true // ^C in a terminal reaches the test binary only; Stop shuts the server down
	cmd.SysProcAttr = &a

	startErr := make(chan error, 1)
	exited := make(chan struct{}) // closed when postgres has exited
	go func() {
		runtime.LockOSThread() // never unlocked: see above
		if err := cmd.Start(); err != nil {
			startErr <- err
			return
		}
		startErr <- nil
		cmd.Wait()
		close(exited)
	}()
	if err := <-startErr; err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	shutdown := func() {
		cmd.Process.Signal(syscall.SIGINT) // fast shutdown
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}
	s := &server{
		dir: dir,
		// A URL, the form every consumer takes (parley serve --db tells PostgreSQL by it).
		dsn: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port),
	}
	var stopOnce sync.Once
	s.stop = func() {
		stopOnce.Do(func() {
			shutdown()
			os.RemoveAll(dir)
		})
	}

	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, s.dsn)
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return s, nil
		}
		var why string
		select {
		case <-exited:
			why = "exited: " + cmd.ProcessState.String()
		default:
			if time.Now().After(deadline) {
				why = fmt.Sprintf("not ready after 60s: %v", err)
			}
		}
		if why != "" {
			log, _ := os.ReadFile(logPath)
			shutdown()
			return nil, fmt.Errorf("postgres on port %d %s\n%s", port, why, tail(log))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// postgresUser returns the credentials of the postgres user, under which initdb agrees to run.
func postgresUser() (*syscall.Credential, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, and initdb refuses root: need a postgres user: %w", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("postgres uid %q: %w", u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("postgres gid %q: %w", u.Gid, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// withDatabase returns dsn (a URL or keyword/value DSN) with its database set to name.
func withDatabase(dsn, name string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", fmt.Errorf("%s: %w", EnvDSN, err)
		}
		u.Path = "/" + name
		return u.String(), nil
	}
	// In keyword/value form the last setting of a keyword wins.
	return strings.TrimSpace(dsn) + " dbname=" + name, nil
}

// redact hides a password in a DSN for error messages.
func redact(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		return u.Redacted()
	}
	if strings.Contains(dsn, "password") {
		return "(DSN with password)"
	}
	return dsn
}

func tail(b []byte) []byte {
	if i := len(b) - 4000; i > 0 {
		b = b[i:]
	}
	return bytes.TrimSpace(b)
}
