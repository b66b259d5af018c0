package e2e_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyhq/parley/internal/browsertest"
	"github.com/parleyhq/parley/internal/servertest"
)

// publicHost is the DNS name the proxy test reaches the server under: not localhost and not
// an IP literal, so /mcp's DNS-rebinding check applies to it. The test maps it to 127.0.0.1
// itself (a dialer for Go, --host-resolver-rules for Chromium); nothing is resolved.
const publicHost = "parley.example.test"

// nginxPath finds Debian's nginx, or skips (fails under PARLEY_TEST_REQUIRE_ALL=1).
func nginxPath(t *testing.T) string {
	t.Helper()
	return browsertest.Find(t, "nginx", "PARLEY_TEST_NGINX", "apt-get install -y nginx", "/usr/sbin/nginx")
}

// selfSigned writes a self-signed certificate for publicHost and its key, as PEM files, and
// returns a pool that trusts it.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: publicHost},
		DNSNames:              []string{publicHost},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(2 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, pool
}

// freePort returns a port on 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// The site the README recommends, with the test's paths and ports filled in.
const nginxConf = `worker_processes 1;
pid {{dir}}/nginx.pid;
{{user}}
events { worker_connections 128; }
http {
    access_log {{dir}}/access.log;
    client_body_temp_path {{dir}}/body;
    proxy_temp_path {{dir}}/proxy;
    fastcgi_temp_path {{dir}}/fastcgi;
    uwsgi_temp_path {{dir}}/uwsgi;
    scgi_temp_path {{dir}}/scgi;
    server {
        listen 127.0.0.1:{{port}} ssl;
        server_name ` + publicHost + `;
        ssl_certificate     {{cert}};
        ssl_certificate_key {{key}};
        location / {
            proxy_pass {{upstream}};
            proxy_http_version 1.1;
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_buffering off;
            proxy_read_timeout 1h;
        }
    }
}
`

// startNginx runs nginx in the foreground with nginxConf, TLS on 127.0.0.1:port in front of
// upstream, and waits until it accepts connections. It is stopped when the test ends.
func startNginx(t *testing.T, port int, upstream, certFile, keyFile string) {
	t.Helper()
	bin := nginxPath(t)
	dir := t.TempDir()
	user := ""
	if os.Geteuid() == 0 {
		// As root nginx would run its worker as nobody, who cannot reach the test's files.
		user = "user root root;"
	}
	conf := strings.NewReplacer("{{dir}}", dir, "{{user}}", user, "{{port}}", strconv.Itoa(port),
		"{{cert}}", certFile, "{{key}}", keyFile, "{{upstream}}", upstream).Replace(nginxConf)
	confFile := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confFile, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	errLog := filepath.Join(dir, "error.log")
	cmd := exec.Command(bin, "-p", dir, "-c", confFile, "-e", errLog, "-g", "daemon off;")
	out := &servertest.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			b, _ := os.ReadFile(errLog)
			t.Logf("nginx error log:\n%s", servertest.Tail(string(b), 30))
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case err := <-done:
			b, _ := os.ReadFile(errLog)
			t.Fatalf("nginx exited: %v\n%s%s", err, out.String(), b)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx does not accept connections on %d: %v", port, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// proxyClient is an HTTP client that reaches publicHost at 127.0.0.1, trusts pool, and
// connects from clientIP (another loopback address, so that the server can tell the client
// from the proxy in its log).
func proxyClient(pool *x509.CertPool, clientIP string) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(clientIP)}}
	tr := &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool},
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			if host != publicHost {
				return nil, fmt.Errorf("the test resolves only %s, not %s", publicHost, host)
			}
			return d.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
		},
	}
	return &http.Client{Transport: tr}
}

// TestBehindNginx puts Debian's nginx, terminating TLS for parley.example.test, in front of
// the real `parley serve --public-url https://parley.example.test:PORT --trusted-proxy
// 127.0.0.1`, and uses every edge through it as a remote user would: the Go MCP SDK client
// over streamable HTTP (a read that waits included), the API's event stream, and the web
// sign-in in headless Chromium. An unlisted Host gets the JSON 403 through nginx too, and the
// request log records the client's address with the proxy's beside it.
func TestBehindNginx(t *testing.T) {
	parley(t)
	nginxPath(t) // skip before starting anything
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	port := freePort(t)
	public := fmt.Sprintf("https://%s:%d", publicHost, port)

	s := servertest.Start(t, "proxied", servertest.Options{
		DB:   "sqlite:" + filepath.Join(dir, "parley.db"),
		Args: []string{"--public-url", public, "--trusted-proxy", "127.0.0.1", "--log-level", "info"},
	})
	startNginx(t, port, s.URL, certFile, keyFile)
	s.CreateRoom(t, "team", servertest.Generous())
	lead := s.AddSeat(t, "team", "lead", "agent")
	builder := s.AddSeat(t, "team", "builder", "agent")

	// The client connects from 127.0.0.3: the log must show that address, not nginx's.
	const clientIP = "127.0.0.3"
	hc := proxyClient(pool, clientIP)
	defer hc.Transport.(*http.Transport).CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	post := func(token, body string) int64 {
		t.Helper()
		r, err := servertest.Do(ctx, hc, "POST", public+"/v1/rooms/team/messages", token, []byte(body))
		if err != nil || r.Status != http.StatusCreated {
			t.Fatalf("post through nginx: %v %s", err, r)
		}
		var res struct{ Seq int64 }
		if err := r.JSON(&res); err != nil {
			t.Fatal(err)
		}
		return res.Seq
	}

	t.Run("mcp", func(t *testing.T) {
		authed := func(token string) *http.Client {
			c := *hc
			c.Transport = tokenTransport{token: token, next: hc.Transport}
			return &c
		}
		connect := func(endpoint, token string) *sdk.ClientSession {
			t.Helper()
			c := sdk.NewClient(&sdk.Implementation{Name: "proxy-test", Version: "v0"}, nil)
			hcl := authed(token)
			if !strings.Contains(endpoint, publicHost) {
				hcl = &http.Client{Transport: tokenTransport{token: token, next: http.DefaultTransport}}
			}
			cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hcl, MaxRetries: -1}, nil)
			if err != nil {
				t.Fatalf("MCP connect to %s: %v", endpoint, err)
			}
			t.Cleanup(func() { cs.Close() })
			return cs
		}
		cs := connect(public+"/mcp", builder)
		text := mcpText(t, ctx, cs, "whoami", nil)
		if !strings.Contains(text, "seat builder") || !strings.Contains(text, "room team") {
			t.Fatalf("whoami through nginx:\n%s", text)
		}
		// A read that waits is answered as the post lands, through the proxy.
		got := make(chan string, 1)
		go func() {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read", Arguments: map[string]any{"wait": 30}})
			if err != nil {
				got <- "error: " + err.Error()
				return
			}
			got <- res.Content[0].(*sdk.TextContent).Text
		}()
		time.Sleep(300 * time.Millisecond)
		posted := time.Now()
		seq := post(lead, "v1 note limiter to all n=1\nthe proxy carries MCP\n")
		select {
		case text := <-got:
			if !strings.Contains(text, fmt.Sprintf("#%d lead ", seq)) {
				t.Fatalf("the waiting read returned:\n%s", text)
			}
			t.Logf("waiting MCP read answered %v after the post", time.Since(posted).Round(time.Millisecond))
		case <-time.After(20 * time.Second):
			t.Fatal("the waiting read through nginx did not return after the post")
		}
		text = mcpText(t, ctx, cs, "post", map[string]any{"body": "v1 note limiter to all n=1\nposted over MCP through nginx\n"})
		if !strings.HasPrefix(text, "posted #") {
			t.Fatalf("post through nginx: %s", text)
		}

		// The round trip of one call, through nginx and TLS and straight to the server, in
		// the same run: a figure for the record, not a check.
		direct := connect(s.URL+"/mcp", builder)
		rt := func(cs *sdk.ClientSession) time.Duration {
			var ds []time.Duration
			for range 20 {
				start := time.Now()
				mcpText(t, ctx, cs, "inbox", nil)
				ds = append(ds, time.Since(start))
			}
			slices.Sort(ds)
			return ds[len(ds)/2]
		}
		viaProxy, straight := rt(cs), rt(direct)
		t.Logf("MCP inbox round trip, median of 20: %v through nginx (TLS), %v direct; ratio %.2f",
			viaProxy.Round(time.Microsecond), straight.Round(time.Microsecond), float64(viaProxy)/float64(straight))
	})

	t.Run("unlisted host", func(t *testing.T) {
		init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"0"}}}`
		req, _ := http.NewRequestWithContext(ctx, "POST", public+"/mcp", strings.NewReader(init))
		req.Host = "evil.example.test"
		req.Header.Set("Authorization", "Bearer "+builder)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e struct {
			Error struct{ Code, Message, Hint string } `json:"error"`
		}
		if resp.StatusCode != http.StatusForbidden || json.Unmarshal(b, &e) != nil || e.Error.Code != "forbidden" ||
			!strings.Contains(e.Error.Message, "evil.example.test") || !strings.Contains(e.Error.Hint, "--allow-host") {
			t.Errorf("Host evil.example.test on /mcp through nginx: %d %s", resp.StatusCode, b)
		}
		// The API itself does not depend on the name.
		if r, err := servertest.Do(ctx, hc, "GET", public+"/healthz", "", nil); err != nil || r.Status != 200 {
			t.Errorf("healthz through nginx: %v %s", err, r)
		}
	})

	t.Run("sse", func(t *testing.T) {
		last := post(lead, "v1 note limiter to all n=1\nbefore the stream\n")
		req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/v1/rooms/team/events?after=%d", public, last), nil)
		req.Header.Set("Authorization", "Bearer "+builder)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("events through nginx: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		ids := make(chan int64, 16)
		go func() {
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
					n, _ := strconv.ParseInt(id, 10, 64)
					ids <- n
				}
			}
			close(ids)
		}()
		var lat []time.Duration
		for i := range 5 {
			time.Sleep(100 * time.Millisecond)
			start := time.Now()
			seq := post(lead, fmt.Sprintf("v1 note limiter to all n=1\nevent %d\n", i))
			select {
			case id, ok := <-ids:
				if !ok || id != seq {
					t.Fatalf("event %d: got id %d (open %v), want %d", i, id, ok, seq)
				}
				lat = append(lat, time.Since(start))
			case <-time.After(10 * time.Second):
				t.Fatalf("event #%d did not come through nginx within 10s: buffered?", seq)
			}
		}
		slices.Sort(lat)
		t.Logf("SSE through nginx, from the post's request to its event: median %v, max %v (5 posts)",
			lat[len(lat)/2].Round(time.Microsecond), lat[len(lat)-1].Round(time.Microsecond))
	})

	t.Run("cookie", func(t *testing.T) {
		// A sign-in through the HTTPS proxy sets a Secure session cookie.
		nc := *hc
		nc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		resp, err := nc.PostForm(public+"/signin", url.Values{"token": {lead}, "next": {"/rooms/team"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var secure bool
		for _, c := range resp.Cookies() {
			secure = secure || (c.Secure && c.HttpOnly && c.Value != "")
		}
		if resp.StatusCode != http.StatusSeeOther || !secure || resp.Header.Get("Location") != "/rooms/team" {
			t.Errorf("sign-in through nginx: %d, Location %q, cookies %v", resp.StatusCode, resp.Header.Get("Location"), resp.Header.Values("Set-Cookie"))
		}
	})

	t.Run("web sign-in", func(t *testing.T) {
		bctx := proxyBrowser(t)
		step := func(name string, actions ...chromedp.Action[chromedp.Void]) {
			t.Helper()
			sctx, cancel := context.WithTimeout(bctx, 30*time.Second)
			defer cancel()
			if err := chromedp.Do(sctx, actions...); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		step("sign in",
			chromedp.Navigate(public+"/rooms/team"),
			chromedp.WaitVisible("#token"),
			chromedp.SendKeys("#token", builder),
			chromedp.Submit("#token"),
			chromedp.WaitVisible("#m1"),
		)
		if loc, _ := chromedp.Run(bctx, chromedp.Location()); loc != public+"/rooms/team" {
			t.Errorf("after sign-in the browser is at %q", loc)
		}
		// The live transcript's stream comes through the proxy too.
		pctx, pcancel := context.WithTimeout(bctx, 20*time.Second)
		if _, err := chromedp.Run(pctx, chromedp.Poll[bool](`document.getElementById("live-status").classList.contains("on")`)); err != nil {
			pcancel()
			t.Fatalf("the live stream did not open through nginx: %v", err)
		}
		pcancel()
		seq := post(lead, "v1 note limiter to all n=1\nlive through the proxy\n")
		step("live message", chromedp.WaitVisible(fmt.Sprintf("#m%d", seq)))
	})

	// The request log names the client (from X-Forwarded-For, believed from 127.0.0.1) and
	// the proxy it came through.
	logged := s.Stderr()
	if !strings.Contains(logged, "remote="+clientIP) || !strings.Contains(logged, "proxy=127.0.0.1:") {
		t.Errorf("the request log does not name client %s and proxy 127.0.0.1:\n%s", clientIP, servertest.Tail(logged, 10))
	}
}

// mcpText calls a tool and returns its text, failing the test on a tool error.
func mcpText(t *testing.T, ctx context.Context, cs *sdk.ClientSession, name string, args map[string]any) string {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	text := strings.Join(parts, "\n")
	if res.IsError {
		t.Fatalf("%s: tool error: %s", name, text)
	}
	return text
}

// proxyBrowser starts headless Chromium that resolves publicHost to 127.0.0.1 and accepts
// the test's self-signed certificate; it skips (fails under PARLEY_TEST_REQUIRE_ALL=1)
// without Chromium.
func proxyBrowser(t *testing.T) context.Context {
	t.Helper()
	return browsertest.New(t,
		chromedp.Flag("host-resolver-rules", "MAP "+publicHost+" 127.0.0.1"),
		chromedp.Flag("ignore-certificate-errors", true))
}
