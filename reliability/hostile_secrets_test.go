package reliability_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyhq/parley/internal/pgtest"
	"github.com/parleyhq/parley/internal/servertest"
	"github.com/parleyhq/parley/internal/tmpfs"
)

func init() { caseSets = append(caseSets, secretCases) }

// splitEvery puts sep between every character of s.
func splitEvery(s, sep string) string { return strings.Join(strings.Split(s, ""), sep) }

// wide spells the ASCII of s in fullwidth letters.
func wide(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r > 0x20 && r < 0x7f {
			r += 0xFEE0
		}
		b.WriteRune(r)
	}
	return b.String()
}

// secretCases are the server's own tokens in disguise: glued to other characters, split by
// characters that render as nothing, spelt in fullwidth letters. Each is refused with the
// kind of secret, never its value, and nothing is stored. A string of a token's shape that
// is no token of this server is not refused.
func secretCases(env *hostileEnv) []hostile {
	tok, admin := env.tokens["b"], env.srv.Admin
	post := "/v1/rooms/h/messages"
	own := "a parley seat token of this server"
	refuse := func(name, hidden, phrase string) hostile {
		return hostile{name: name, method: "POST", path: post, as: "a", body: conv("fact it is " + hidden),
			status: 422, code: "invalid", phrase: phrase}
	}
	var many strings.Builder
	for i := range 70 {
		fmt.Fprintf(&many, "x%s%042dzz ", "pk_", i)
	}
	return []hostile{
		refuse("own token glued after a letter", "x"+tok, own),
		refuse("own token glued before a letter", tok+"y", own),
		refuse("own token inside a word", "id="+tok+"&next", own),
		refuse("own token split by a zero-width space", tok[:20]+"\u200b"+tok[20:], own),
		refuse("own token split by a soft hyphen", tok[:9]+"\u00ad"+tok[9:], own),
		refuse("own token split by word joiners", splitEvery(tok, "\u2060"), own),
		refuse("own token with a BOM and a ZWJ", "\ufeff"+tok[:4]+"\u200d"+tok[4:], own),
		refuse("own token behind a bidi override", "\u202e"+tok+"\u202c", "bidirectional control U+202E"), // the line rules refuse it before the scan
		refuse("own token in fullwidth letters", wide(tok), own),
		refuse("own token glued and split", "k"+tok[:30]+"\u200c"+tok[30:]+"z", own),
		refuse("revoked seat's token glued", "x"+env.tokens["gone"], own),
		refuse("another room's token glued", "x"+env.tokens["x"]+"y", own),
		refuse("admin token glued", "x"+admin+"y", "this server's admin token"),
		refuse("admin token split by a zero-width space", admin[:10]+"\u200b"+admin[10:], "this server's admin token"),
		refuse("seventy token-shaped strings", many.String(), "too many to check"),
		{name: "a token-shaped string of no seat passes", method: "POST", path: post, as: "a",
			body:   conv("fact fixture id x" + "pk_" + strings.Repeat("Nq7", 14) + "N" + "y"),
			status: 201, stored: true, check: func(t *testing.T, e servertest.Entry) {
				if !strings.Contains(e.Body, "fixture id") {
					t.Errorf("stored the wrong message:\n%s", e.Body)
				}
			}},
	}
}

// TestSecretRefusalNeverEchoes posts every disguise of a seat token and checks that no
// answer, on either store, shows 12 characters of it in a row.
func TestSecretRefusalNeverEchoes(t *testing.T) {
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			dsn := ""
			if store == "postgres" {
				dsn = pgtest.DSN(t)
			}
			srv := servertest.InProcess(t, servertest.InProcessOptions{PostgresDSN: dsn})
			srv.CreateRoom(t, "h", servertest.Generous())
			a := srv.AddSeat(t, "h", "a", "agent")
			tok := srv.AddSeat(t, "h", "b", "agent")
			for _, hidden := range []string{"x" + tok, tok[:20] + "\u200b" + tok[20:], wide(tok), splitEvery(tok, "\u00ad")} {
				for _, path := range []string{"/v1/rooms/h/messages", "/v1/rooms/h/lint"} {
					r := srv.Call(t, "POST", path, a, conv("fact it is "+hidden))
					for i := 0; i+12 <= len(tok); i++ {
						if bytes.Contains(r.Body, []byte(tok[i:i+12])) {
							t.Fatalf("%s answer shows the token: %s", path, r)
						}
					}
					if !bytes.Contains(r.Body, []byte("of this server")) {
						t.Errorf("%s answer does not name the kind: %s", path, r)
					}
				}
			}
		})
	}
}

// TestTokensNeverLogged runs the real binary with debug logging and sends tokens where
// clients put them by mistake, to the API, the web UI and the MCP endpoint: in the query
// (token, access_token, auth, key, or any name), and as path segments, glued or not. The log
// holds none of them.
func TestTokensNeverLogged(t *testing.T) {
	dir := t.TempDir()
	srv := servertest.Start(t, "logs", servertest.Options{DB: "sqlite:" + filepath.Join(dir, "p.db"), Args: []string{"--log-level", "debug"}})
	srv.CreateRoom(t, "h", nil)
	seat := srv.AddSeat(t, "h", "a", "agent")
	secrets := []string{seat, srv.Admin}
	for _, tok := range secrets {
		q := url.QueryEscape(tok)
		for _, path := range []string{
			"/v1/rooms/h/history?token=" + q, "/v1/rooms/h/history?access_token=" + q + "&after=0",
			"/v1/rooms/h/history?auth=" + q, "/v1/rooms/h/history?key=" + q, "/v1/rooms/h/history?x=" + q,
			"/v1/rooms/" + url.PathEscape(tok) + "/history", "/v1/rooms/h/state/" + url.PathEscape("t"+tok),
			"/rooms/" + url.PathEscape(tok), "/rooms/h?token=" + q, "/signin?next=/rooms/h&token=" + q,
			"/mcp?access_token=" + q, "/mcp/" + url.PathEscape(tok), "/nowhere/" + url.PathEscape(tok) + "?auth=" + q,
		} {
			srv.Call(t, "GET", path, "", nil)
			srv.Call(t, "GET", path, seat, nil)
		}
	}
	// Let the last request's log line be written.
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(srv.Stderr(), "/nowhere/REDACTED") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	logs := srv.Stderr()
	if n := strings.Count(logs, "REDACTED"); n < 40 {
		t.Errorf("%d REDACTED marks in the log, want one per request at least", n)
	}
	for _, tok := range secrets {
		for i := 0; i+12 <= len(tok); i += 4 {
			if strings.Contains(logs, tok[i:i+12]) {
				t.Fatalf("the log holds part of a token (%q):\n%s", tok[i:i+12], servertest.Tail(logs, 30))
			}
		}
	}
}

// TestSecondServeRefused starts `parley serve` twice on one SQLite file: the second exits 1
// at once, naming the pid of the first; after the first is killed with SIGKILL (no chance to
// clean up), a new server starts on the same file.
func TestSecondServeRefused(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "p.db")
	first := servertest.Start(t, "first", servertest.Options{DB: "sqlite:" + db})
	first.CreateRoom(t, "h", nil)
	b, err := os.ReadFile(db + ".lock")
	if err != nil {
		t.Fatalf("no lock file beside the database: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("the lock file holds %q, not a pid", b)
	}
	if cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); !bytes.Contains(cmdline, []byte("serve")) {
		t.Errorf("pid %d in the lock file is not the running server (%q)", pid, cmdline)
	}
	link := filepath.Join(dir, "link.db")
	if err := os.Symlink(db, link); err != nil {
		t.Fatal(err)
	}
	for _, spelling := range []string{"sqlite:" + db, db, "sqlite:" + link} {
		out, code := runSecond(t, spelling, first.Admin)
		if code != 1 || !strings.Contains(out, fmt.Sprintf("another parley serve (pid %d)", pid)) || !strings.Contains(out, "is in use") {
			t.Fatalf("second serve on %s: exit %d:\n%s", spelling, code, out)
		}
		if strings.Contains(out, "listening") {
			t.Fatalf("the second server listened:\n%s", out)
		}
	}
	// The first still serves, undisturbed.
	if r := first.Call(t, "GET", "/v1/rooms/h", first.Admin, nil); r.Status != 200 {
		t.Fatalf("first server after the refused second: %s", r)
	}
	first.Kill()
	again := servertest.Start(t, "again", servertest.Options{DB: "sqlite:" + db, Admin: first.Admin})
	if r := again.Call(t, "GET", "/v1/rooms/h", again.Admin, nil); r.Status != 200 {
		t.Fatalf("server after a killed one: %s", r)
	}
	if b, _ := os.ReadFile(db + ".lock"); strings.TrimSpace(string(b)) == strconv.Itoa(pid) {
		t.Errorf("the lock file still names the killed server")
	}
}

// runSecond runs `parley serve` on db and returns its output and exit code; it must exit by
// itself within 20 seconds.
func runSecond(t *testing.T, db, admin string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, servertest.Binary(t), "serve", "--addr", "127.0.0.1:0", "--db", db)
	cmd.Env = servertest.CleanEnv("PARLEY_ADMIN_TOKEN=" + admin)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	}
	t.Fatalf("second serve: %v\n%s", err, out)
	return "", 0
}

// TestStorageFull fills the server's storage for real, on both stores, and checks every
// edge: HTTP answers 507 storage_full with the hint, the CLI exits 75 with it, the MCP post
// tool returns a tool error with it, and the web form shows it with status 507. Once space
// returns, posts succeed again, and every post that was acknowledged is in history, in order,
// with gapless seqs; no refused post is.
//
// SQLite: the database lives on a small tmpfs, and a filler file takes the rest of it (a
// full disk, ENOSPC: needs root; skipped otherwise). PostgreSQL: a trigger raises
// SQLSTATE 53100 disk_full on every message insert, which is what PostgreSQL itself raises
// when it cannot extend a file.
func TestStorageFull(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		mnt := smallDisk(t)
		filler := filepath.Join(mnt, "filler")
		srv := servertest.Start(t, "full-sqlite", servertest.Options{DB: "sqlite:" + filepath.Join(mnt, "p.db")})
		storageFullEdges(t, srv, func() { fillDisk(t, filler) }, func() {
			if err := os.Remove(filler); err != nil {
				t.Fatal(err)
			}
		})
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.DSN(t)
		srv := servertest.Start(t, "full-postgres", servertest.Options{DB: dsn})
		exec := func(sql string) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			conn, err := pgx.Connect(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			if _, err := conn.Exec(ctx, sql); err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
		}
		storageFullEdges(t, srv, func() {
			exec(`CREATE FUNCTION test_disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full'; END $$;
				CREATE TRIGGER test_disk_full BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION test_disk_full()`)
		}, func() { exec(`DROP TRIGGER test_disk_full ON messages; DROP FUNCTION test_disk_full()`) })
	})
}

// smallDisk mounts a 2 MiB tmpfs for the test, or skips it. Mounted before the server starts,
// it is unmounted after the server is gone.
func smallDisk(t *testing.T) string { return tmpfs.Mount(t, "2m") }

// fillDisk writes zeros to path until the file system has no space left.
func fillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return
			}
			t.Fatal(err)
		}
	}
}

const fullHint = "the server's disk is full; nothing was stored"

func storageFullEdges(t *testing.T, srv *servertest.Server, fill, free func()) {
	srv.CreateRoom(t, "f", servertest.Generous())
	agent := srv.AddSeat(t, "f", "a", "agent")
	human := srv.AddSeat(t, "f", "hu", "human")
	var acked []string
	n := 0
	next := func(size int) []byte {
		n++
		return conv(fmt.Sprintf("fact post %d %s", n, strings.Repeat("w", size)))
	}
	for range 3 {
		b := next(10)
		if r := srv.Call(t, "POST", "/v1/rooms/f/messages", agent, b); r.Status != 201 {
			t.Fatalf("post before the disk filled: %s", r)
		}
		acked = append(acked, string(b))
	}
	fill()

	// HTTP: keep posting until the store runs out (SQLite still has room in its files at
	// first); every 201 on the way is an acknowledged post that must survive.
	var refused []string
	var full servertest.Response
	for i := 0; ; i++ {
		b := next(3000)
		r := srv.Call(t, "POST", "/v1/rooms/f/messages", agent, b)
		if r.Status == 201 {
			acked = append(acked, string(b))
			if i > 2000 {
				t.Fatalf("2000 posts on a full disk all acknowledged")
			}
			continue
		}
		full, refused = r, append(refused, string(b))
		break
	}
	checkAnswer(t, full, 507, "storage_full", "storage is full")
	if e := full.Err(); !strings.Contains(e.Error.Hint, fullHint) {
		t.Errorf("hint %q lacks %q", e.Error.Hint, fullHint)
	}

	// CLI.
	body := next(100)
	refused = append(refused, string(body))
	cmd := exec.Command(servertest.Binary(t), "post", "--url", srv.URL, "--token", agent, "f", "-")
	cmd.Env = servertest.CleanEnv()
	cmd.Stdin = bytes.NewReader(body)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 75 || !strings.Contains(string(out), fullHint) {
		t.Errorf("parley post on a full disk: %v, want exit 75 and the hint:\n%s", err, out)
	}

	// MCP.
	hc := &http.Client{Transport: bearerRT{token: agent}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(t.Context(),
		&sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("mcp connect: %v", err)
	}
	defer cs.Close()
	body = next(100)
	refused = append(refused, string(body))
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "post", Arguments: map[string]any{"body": string(body)}})
	if err != nil {
		t.Fatalf("mcp post: %v", err)
	}
	text := ""
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			text += tc.Text
		}
	}
	if !res.IsError || !strings.HasPrefix(text, "storage_full:") || !strings.Contains(text, fullHint) {
		t.Errorf("mcp post on a full disk: error=%v\n%s", res.IsError, text)
	}

	// Web.
	jar, _ := cookiejar.New(nil)
	web := &http.Client{Jar: jar}
	form := func(path string, v url.Values) (int, string) {
		resp, err := web.PostForm(srv.URL+path, v)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, page := form("/signin", url.Values{"token": {human}, "next": {"/rooms/f"}}); code != 200 {
		t.Fatalf("web sign in: %d\n%s", code, page)
	}
	resp, err := web.Get(srv.URL + "/rooms/f")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(page)
	if m == nil {
		t.Fatalf("no csrf on the room page:\n%s", page)
	}
	body = next(100)
	refused = append(refused, string(body))
	// The refusal redirects back to the room (POST/redirect/GET), which the client follows:
	// the room page says why and keeps the draft.
	code, pageText := form("/rooms/f/post", url.Values{"csrf": {string(m[1])}, "body": {string(body)}})
	if code != 200 || !strings.Contains(pageText, "disk is full; nothing was stored") {
		t.Errorf("web post on a full disk: status %d\n%s", code, servertest.Tail(pageText, 40))
	}

	// Space returns: the server recovers without a restart.
	free()
	b := next(10)
	if r := srv.Call(t, "POST", "/v1/rooms/f/messages", agent, b); r.Status != 201 {
		t.Fatalf("post after space returned: %s", r)
	}
	acked = append(acked, string(b))

	entries, err := servertest.ParseHistory(srv.History(t, "f", srv.Admin))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(acked) {
		t.Fatalf("history has %d messages; %d were acknowledged", len(entries), len(acked))
	}
	for i, e := range entries {
		if e.Seq != int64(i+1) || strings.TrimRight(e.Body, "\n") != strings.TrimRight(acked[i], "\n") {
			t.Fatalf("history #%d (seq %d) is not the %d-th acknowledged post:\n%.80s", i+1, e.Seq, i+1, e.Body)
		}
	}
	hist := srv.History(t, "f", srv.Admin)
	for _, r := range refused {
		if strings.Contains(hist, strings.SplitN(r, "\n", 3)[1]) {
			t.Errorf("a refused post is in history: %.60s", r)
		}
	}
	t.Logf("%d posts acknowledged, %d refused while full", len(acked), len(refused))
}

type bearerRT struct{ token string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}
