package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/parleyhq/parley"
	phttp "github.com/parleyhq/parley/http"
	"github.com/parleyhq/parley/internal/metrics"
	"github.com/parleyhq/parley/internal/redact"
	"github.com/parleyhq/parley/mcp"
	"github.com/parleyhq/parley/postgres"
	"github.com/parleyhq/parley/room"
	"github.com/parleyhq/parley/sqlite"
	"github.com/parleyhq/parley/web"
)

const serveDescription = `
Run the room server: the HTTP API (/v1/…), live reads over Server-Sent Events, MCP for
agents at /mcp, the web UI at /, the format lab at /lab (a2c and lint in the browser, no
token needed), /healthz and /metrics. It binds to localhost unless told otherwise.

Storage is SQLite by default: parley.db in the working directory, and beside it
parley.db-search (the search index) and parley.db-wal (which the server grows to 40 MB at
start, where the disk has 320 MB free, so that commits write over it rather than append to
it). PostgreSQL lets several 'parley serve' processes share one database behind a load
balancer: sequence numbers stay gapless and repeats and idempotency keys are caught across
all of them. Each process keeps four connections open (and one that listens for other
processes' posts) and starts listening only once they are open and ready, so that its first
requests do not wait for them; the connection string's pool_max_conns and pool_min_conns
change that (pool_min_conns=0: connect on demand).

The server's admin token (for 'parley room' and 'parley seat') comes from
$PARLEY_ADMIN_TOKEN. Without it, the first start on a SQLite database creates one, prints it
once, and keeps only its SHA-256 in a file next to the database (PATH.admin, mode 0600), so
it keeps working across restarts. With PostgreSQL, set $PARLEY_ADMIN_TOKEN: every instance
must share it.

--git-repo names a git repository that 'ev commit <sha> [on <branch>]' evidence is checked
against; without it, commit evidence stays unverified.

--tls-cert and --tls-key (PEM files: the certificate chain, then its private key) make it
serve HTTPS, HTTP/2 included, instead of plain HTTP; give both or neither. The files are
read at start, and read again when they change on disk, so a renewed certificate is picked
up without a restart.

Behind a reverse proxy (TLS at nginx, say), tell the server its public address with
--public-url https://parley.example.com: /mcp then accepts that host name and browser
requests from that origin. /mcp refuses every other DNS name (DNS-rebinding protection);
IP addresses and localhost always pass, and --allow-host adds more names (repeat it, or
list them comma-separated). An https public URL also marks the web UI's session cookie
Secure.

X-Forwarded-For and X-Forwarded-Proto are believed only from --trusted-proxy networks (a
CIDR or an address; repeatable): the request log then records the client's address (and
the proxy's), and a client the proxy says came over HTTPS gets a Secure cookie. From
anyone else those headers are ignored. Give /mcp and the event streams an unbuffered
proxy; an nginx site for it:

    server {
        listen 443 ssl;
        server_name parley.example.com;
        ssl_certificate     /etc/ssl/parley.pem;
        ssl_certificate_key /etc/ssl/parley.key;
        location / {
            proxy_pass http://127.0.0.1:7070;
            proxy_http_version 1.1;
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_buffering off;        # SSE and MCP streams arrive as they are sent
            proxy_read_timeout 1h;      # long reads and event streams stay open
        }
    }

    parley serve --public-url https://parley.example.com --trusted-proxy 127.0.0.1

--commit-wait D bounds how long a commit may wait for posts that passed authentication and
are on their way to it, so that one commit serves them too; a lone post, with nothing on its
way to its room, commits at once. On SQLite (default 200µs, about one commit's fixed cost) the
one committer waits for posts to any room; on PostgreSQL (default 6ms) a room's batch waits
for posts to that room, which with several servers on one database take turns at the room's
lock. 0 never waits; at most 10ms. Compare settings with 'parley bench server --commit-wait D'.

--cpuprofile FILE writes a Go CPU profile of the server, from start until it shuts down on
SIGINT or SIGTERM, for 'go tool pprof FILE' (a server killed with SIGKILL leaves the file
unfinished). The profiler samples the server 100 times a second; leave it off unless you
are measuring.

Environment: PARLEY_ADDR, PARLEY_DB, PARLEY_GIT_REPO, PARLEY_ADMIN_TOKEN, PARLEY_TLS_CERT,
PARLEY_TLS_KEY, PARLEY_PUBLIC_URL stand in for the flags (a flag wins).`

const serveExamples = `  parley serve
  parley serve --addr 127.0.0.1:8080 --db sqlite:/var/lib/parley/parley.db --git-repo ~/src/app
  PARLEY_ADMIN_TOKEN=… parley serve --addr :7070 --db postgres://parley@db/parley --log-format json
  parley serve --addr :443 --tls-cert /etc/parley/cert.pem --tls-key /etc/parley/key.pem
  parley serve --public-url https://parley.example.com --trusted-proxy 127.0.0.1
  parley serve --addr 0.0.0.0:7070 --allow-host parley.internal --trusted-proxy 10.0.0.0/8
  parley serve --cpuprofile serve.prof   # then: go tool pprof -top serve.prof
  parley serve --commit-wait 0           # never hold a commit for posts on their way`

func runServe(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "serve", "serve [flags]", serveDescription, serveExamples)
	addr := fs.String("addr", "", "listen `address` (default $PARLEY_ADDR, else 127.0.0.1:7070; port 0 picks a free one)")
	db := fs.String("db", "", "database: sqlite:PATH, a bare PATH, or postgres://… (default $PARLEY_DB, else sqlite:parley.db)")
	gitRepo := fs.String("git-repo", "", "git repository to check commit evidence against (default $PARLEY_GIT_REPO)")
	logFormat := fs.String("log-format", "text", "log format on stderr: text or json")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	tlsCert := fs.String("tls-cert", "", "serve HTTPS with this PEM certificate `file` (chain included; default $PARLEY_TLS_CERT); needs --tls-key")
	tlsKey := fs.String("tls-key", "", "the PEM private key `file` of --tls-cert (default $PARLEY_TLS_KEY)")
	publicURL := fs.String("public-url", "", "the `URL` users reach the server at through a proxy, e.g. https://parley.example.com: /mcp accepts its host and origin (default $PARLEY_PUBLIC_URL)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile to `file` from start until shutdown (for go tool pprof)")
	commitWait := fs.Duration("commit-wait", 0, "how long a commit may wait for posts already on their way to it, so that one commit serves them all (default: 200µs on SQLite, 6ms on PostgreSQL; 0: never; at most 10ms)")
	var allowHosts, trustedProxies repeated
	fs.Var(&allowHosts, "allow-host", "another host `name` /mcp accepts (DNS-rebinding protection refuses names not listed); repeatable")
	fs.Var(&trustedProxies, "trusted-proxy", "believe X-Forwarded-For/-Proto from this `CIDR` or address, your reverse proxy's; repeatable")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("serve takes no arguments, got %q", pos)
	}
	*addr = serveSetting(*addr, e.getenv("PARLEY_ADDR"), "127.0.0.1:7070")
	*db = serveSetting(*db, e.getenv("PARLEY_DB"), "sqlite:parley.db")
	*gitRepo = serveSetting(*gitRepo, e.getenv("PARLEY_GIT_REPO"))
	*tlsCert = serveSetting(*tlsCert, e.getenv("PARLEY_TLS_CERT"))
	*tlsKey = serveSetting(*tlsKey, e.getenv("PARLEY_TLS_KEY"))
	*publicURL = serveSetting(*publicURL, e.getenv("PARLEY_PUBLIC_URL"))
	proxy, err := parseProxySetup(*publicURL, allowHosts, trustedProxies)
	if err != nil {
		return err
	}
	// Checked before the database is opened: a certificate that does not load is a
	// configuration error, reported at once.
	certs, err := loadTLS(*tlsCert, *tlsKey)
	if err != nil {
		return err
	}

	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return usageErrorf("--log-level %q: use debug, info, warn or error", *logLevel)
	}
	// Every string the server logs is scrubbed of token-shaped values and of the admin token,
	// whatever logged it (the request log redacts by itself; this catches the rest).
	hopts := &slog.HandlerOptions{Level: level, ReplaceAttr: redact.ReplaceAttr(e.getenv("PARLEY_ADMIN_TOKEN"))}
	var log *slog.Logger
	switch *logFormat {
	case "text":
		log = slog.New(slog.NewTextHandler(e.stderr, hopts))
	case "json":
		log = slog.New(slog.NewJSONHandler(e.stderr, hopts))
	default:
		return usageErrorf("--log-format %q: use text or json", *logFormat)
	}
	if *gitRepo != "" {
		if st, err := os.Stat(*gitRepo); err != nil || !st.IsDir() {
			return usageErrorf("--git-repo %q is not a directory", *gitRepo)
		}
	}

	kind, target, err := parseDB(*db)
	if err != nil {
		return err
	}
	wait, err := commitWaitFlag(fs, *commitWait)
	if err != nil {
		return err
	}
	if kind == "sqlite" {
		unlock, err := lockDB(target)
		if err != nil {
			return &exitError{code: 1, msg: err.Error()}
		}
		defer unlock()
	}
	// The lock above makes this the file's only writer (sqlite.Sole).
	store, err := openStoreLogged(ctx, kind, target, log, kind == "sqlite", wait)
	if err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	defer store.Close()

	admin, err := adminToken(e, kind, target)
	if err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	// One Prometheus registry for the service and the edges: /metrics serves it.
	reg := metrics.New()
	if cs, ok := store.(parley.CommitStatser); ok {
		reg.StoreCommits(cs.CommitStats)
	}
	rs, err := room.New(store, room.Config{AdminToken: admin.token, AdminHash: admin.hash, GitRepo: *gitRepo, Logger: log, Observer: reg})
	if err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	var svc parley.RoomService = rs
	if admin.hash != nil {
		svc = &adminGate{RoomService: rs, hash: admin.hash}
	}

	h := phttp.NewServer(svc, phttp.WithLogger(log), phttp.WithRenderer(room.Renderer{}), phttp.WithMetrics(reg), phttp.WithTrustedProxies(proxy.trusted))
	mcpOpts := []mcp.Option{mcp.ShutdownOn(ctx.Done()), mcp.WithRenderer(room.Renderer{})}
	for _, host := range proxy.hosts {
		mcpOpts = append(mcpOpts, mcp.AllowHost(host))
	}
	webOpts := web.Options{Done: ctx.Done(), Secure: proxy.https()}
	if proxy.origin != "" {
		mcpOpts = append(mcpOpts, mcp.AllowOrigin(proxy.origin))
		webOpts.TrustedOrigins = []string{proxy.origin}
	}
	h.Handle("/mcp", mcp.NewHandler(svc, log, mcpOpts...))
	h.Handle("/", web.NewHandler(svc, log, webOpts))
	srv := phttp.NewHTTPServer(*addr, h, log)
	srv.RegisterOnShutdown(h.CloseStreams)
	if certs != nil {
		certs.log = log
		// http.Server.ServeTLS offers HTTP/2 ("h2") and HTTP/1.1 by ALPN on this config.
		srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: certs.get}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("listen on %s: %v", *addr, err)}
	}
	url := "http://" + ln.Addr().String()
	if certs != nil {
		url = "https://" + ln.Addr().String()
	}
	adminFrom := "PARLEY_ADMIN_TOKEN"
	if admin.hash != nil {
		adminFrom = target + ".admin"
	}
	log.Info("serving", "addr", ln.Addr().String(), "tls", certs != nil, "db", kind, "admin_token", adminFrom, "git_repo", *gitRepo, "version", parleyVersion(),
		"public_url", *publicURL, "allow_hosts", strings.Join(proxy.hosts, ","), "trusted_proxies", proxy.trusted.String())
	if st, ok := store.(interface{ CommitWait() time.Duration }); ok {
		log.Info("commit wait", "db", kind, "commit_wait", st.CommitWait().String())
	}
	fmt.Fprintf(e.stdout, "parley: listening on %s\n", url)
	if proxy.publicURL != nil {
		fmt.Fprintf(e.stdout, "parley: public URL %s (MCP at %s/mcp)\n", proxy.origin, proxy.origin)
	}

	schedCtx, stopSched := context.WithCancel(ctx)
	schedDone := make(chan struct{})
	go func() {
		defer close(schedDone)
		rs.RunScheduler(schedCtx)
	}()

	serveErr := make(chan error, 1)
	go func() {
		if certs != nil {
			serveErr <- srv.ServeTLS(ln, "", "")
			return
		}
		serveErr <- srv.Serve(ln)
	}()
	select {
	case err := <-serveErr:
		stopSched()
		<-schedDone
		return &exitError{code: 1, msg: fmt.Sprintf("serve: %v", err)}
	case <-ctx.Done():
	}

	log.Info("shutting down: finishing requests in flight")
	shutCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		log.Warn("shutdown", "err", err)
	}
	stopSched()
	<-schedDone
	fmt.Fprintln(e.stdout, "parley: stopped")
	return nil
}

func serveSetting(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// parseDB splits a --db value into a store kind and its path or DSN.
func parseDB(db string) (kind, target string, err error) {
	switch {
	case strings.HasPrefix(db, "postgres://"), strings.HasPrefix(db, "postgresql://"):
		return "postgres", db, nil
	case strings.HasPrefix(db, "sqlite:"):
		target = strings.TrimPrefix(strings.TrimPrefix(db, "sqlite:"), "//")
	case strings.Contains(db, "://"):
		return "", "", usageErrorf("--db %q: use sqlite:PATH, a bare PATH, or postgres://…", db)
	case strings.Contains(db, "=") && strings.ContainsAny(db, " \t"):
		// A keyword/value DSN ("host=… dbname=…") would otherwise become the name of a new
		// SQLite file, and the server would run, empty, on it.
		return "", "", usageErrorf("--db %q looks like a PostgreSQL keyword/value DSN: write it as postgres://user@host:port/dbname", db)
	default:
		target = db
	}
	if target == "" {
		return "", "", usageErrorf("--db %q names no file: use sqlite:PATH", db)
	}
	return "sqlite", target, nil
}

// openStoreLogged opens the store a --db value names; the PostgreSQL store logs its
// listener's reconnects to log. sole says that the caller holds the SQLite file's lock
// (lockDB), so the store may keep what it reads of seats (sqlite.Sole).
func openStoreLogged(ctx context.Context, kind, target string, log *slog.Logger, sole bool, wait *time.Duration) (parley.Store, error) {
	if kind == "postgres" {
		opts := []postgres.Option{postgres.WithLogger(log), postgres.WithWarmConns(postgres.DefaultWarmConns)}
		if wait != nil {
			opts = append(opts, postgres.WithCommitWait(*wait))
		}
		s, err := postgres.Open(ctx, target, opts...)
		if err != nil {
			return nil, fmt.Errorf("open PostgreSQL: %w", err)
		}
		return s, nil
	}
	opts := []sqlite.Option{sqlite.WithLogger(log), sqlite.WarmWAL()}
	if wait != nil {
		opts = append(opts, sqlite.WithCommitWait(*wait))
	}
	if sole {
		opts = append(opts, sqlite.Sole())
	}
	s, err := sqlite.Open(ctx, target, opts...)
	if err != nil {
		return nil, fmt.Errorf("open SQLite database %s: %w", target, err)
	}
	return s, nil
}

// adminAuth is how the server recognises its admin: a plain token (from the environment), or
// only the hash of one created at an earlier start.
type adminAuth struct {
	token string
	hash  []byte
}

// adminToken returns the admin token from $PARLEY_ADMIN_TOKEN, or, for SQLite, the hash kept
// next to the database, creating the token (and printing it, the only time it is shown) on
// first start.
func adminToken(e *env, kind, dbPath string) (adminAuth, error) {
	if t := e.getenv("PARLEY_ADMIN_TOKEN"); t != "" {
		if len(t) < 16 {
			return adminAuth{}, errors.New("PARLEY_ADMIN_TOKEN is shorter than 16 characters: use a long random token")
		}
		return adminAuth{token: t}, nil
	}
	if kind != "sqlite" {
		return adminAuth{}, errors.New("set PARLEY_ADMIN_TOKEN: with PostgreSQL every instance must share one admin token\nhint: generate one with 'openssl rand -base64 32' and give it to every instance")
	}
	path := dbPath + ".admin"
	if h, err := readAdminHash(path); err == nil {
		return adminAuth{hash: h}, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return adminAuth{}, err
	}

	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return adminAuth{}, fmt.Errorf("admin token: %w", err)
	}
	// The seat-token shape, so the server's secret scan refuses it in a message too.
	token := room.TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	sum := sha256.Sum256([]byte(token))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		// Another process got there first; its token is the one.
		h, err := readAdminHash(path)
		return adminAuth{hash: h}, err
	}
	if err != nil {
		return adminAuth{}, fmt.Errorf("store the admin token's hash: %w", err)
	}
	_, err = fmt.Fprintf(f, "sha256:%s\n", hex.EncodeToString(sum[:]))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return adminAuth{}, fmt.Errorf("store the admin token's hash in %s: %w", path, err)
	}
	fmt.Fprintf(e.stdout, `parley: created the server's admin token. It is shown only now; %s keeps its hash.

    export PARLEY_ADMIN_TOKEN=%s

parley: with it, create a room and its seats:  parley room create team && parley seat add team lead
`, path, token)
	return adminAuth{hash: sum[:]}, nil
}

func readAdminHash(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s := strings.TrimSpace(string(b))
	h, err := hex.DecodeString(strings.TrimPrefix(s, "sha256:"))
	if !strings.HasPrefix(s, "sha256:") || err != nil || len(h) != sha256.Size {
		return nil, fmt.Errorf("%s does not hold an admin token hash (sha256:<64 hex digits>)\nhint: delete it to create a new admin token at the next start, or set PARLEY_ADMIN_TOKEN", path)
	}
	return h, nil
}

// adminGate recognises the admin by the hash of its token, which is all the server keeps of
// a token it created itself; every other token goes to the room service.
type adminGate struct {
	parley.RoomService
	hash []byte
}

func (g *adminGate) Authenticate(ctx context.Context, token string) (*parley.Caller, error) {
	sum := sha256.Sum256([]byte(token))
	if subtle.ConstantTimeCompare(sum[:], g.hash) == 1 {
		return &parley.Caller{Admin: true}, nil
	}
	return g.RoomService.Authenticate(ctx, token)
}

// startCPUProfile starts Go's CPU profiler writing to path; stop ends it and closes the file.
// The file is created at once, so a path that cannot be written is an error at start, not a
// profile lost at shutdown.
func startCPUProfile(path string) (stop func(), err error) {
	stop, err = profileTo(path, pprof.StartCPUProfile, pprof.StopCPUProfile)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return nil, usageErrorf("--cpuprofile: %v", err) // the file could not be made
	}
	if err != nil {
		return nil, &exitError{code: 1, msg: fmt.Sprintf("--cpuprofile: %v", err)}
	}
	return stop, nil
}

// profileTo creates path and starts a profile or trace into it (start); done stops it (stop)
// and closes the file. The file's creation fails with a *fs.PathError.
func profileTo(path string, start func(io.Writer) error, stop func()) (done func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := start(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		stop()
		f.Close()
	}, nil
}

// commitWaitFlag reads --commit-wait: nil when it was not given (each store's default), and
// a usage error when it is out of range.
func commitWaitFlag(fs *flag.FlagSet, d time.Duration) (*time.Duration, error) {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "commit-wait" })
	if !set {
		return nil, nil
	}
	if d < 0 || d > 10*time.Millisecond {
		return nil, usageErrorf("--commit-wait must be 0..10ms, not %s", d)
	}
	return &d, nil
}
