package e2e_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyhq/parley/client"
	"github.com/parleyhq/parley/internal/servertest"
)

// testCA is a certificate authority made for one test, and a server certificate it signed
// for 127.0.0.1, written as PEM files.
type testCA struct {
	pool              *x509.CertPool
	certFile, keyFile string
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "parley test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := &testCA{pool: x509.NewCertPool(), certFile: filepath.Join(dir, "cert.pem"), keyFile: filepath.Join(dir, "key.pem")}
	c.pool.AddCert(ca)
	if err := os.WriteFile(c.certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return c
}

// tokenTransport adds a bearer token to every request.
type tokenTransport struct {
	token string
	next  http.RoundTripper
}

func (b tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// TestTLS: with --tls-cert and --tls-key the binary serves HTTPS, and a client that trusts
// the certificate's CA gets HTTP/2 by ALPN for the whole API: a post, history (plain and
// gzipped), the event stream (gzipped, each event arriving as it is posted) and MCP.
func TestTLS(t *testing.T) {
	ca := newTestCA(t)
	admin := servertest.NewToken()
	db := "sqlite:" + filepath.Join(t.TempDir(), "parley.db")
	s := startServer(t, "tls", []string{"PARLEY_ADMIN_TOKEN=" + admin}, "--db", db, "--tls-cert", ca.certFile, "--tls-key", ca.keyFile)
	if !strings.HasPrefix(s.url, "https://") {
		t.Fatalf("the server says it listens on %s, not https://", s.url)
	}

	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.pool}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// A client that does not trust the CA is refused by the handshake.
	if _, err := http.Get(s.url + "/healthz"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a client without the CA: %v, want a certificate error", err)
	}

	resp, err := hc.Get(s.url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Proto != "HTTP/2.0" || resp.TLS == nil || resp.TLS.NegotiatedProtocol != "h2" {
		t.Fatalf("healthz over %s (ALPN %v), want HTTP/2.0 negotiated as h2", resp.Proto, resp.TLS)
	}

	ac, err := client.New(s.url, admin, client.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ac.CreateRoomJSON(ctx, nil, "sec", nil); err != nil {
		t.Fatal(err)
	}
	_, tok, err := ac.AddSeat(ctx, nil, "sec", "lead", "agent")
	if err != nil {
		t.Fatal(err)
	}
	lead := ac.WithToken(tok)

	// The event stream, opened before the posts, gzipped: every event must arrive while the
	// stream stays open, so the compressor is flushed after each one.
	req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/v1/rooms/sec/events?after=0", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Accept-Encoding", "gzip") // set by hand: the transport leaves the body compressed
	ev, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Body.Close()
	if ev.StatusCode != 200 || ev.Proto != "HTTP/2.0" || ev.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("events: %d over %s, Content-Encoding %q", ev.StatusCode, ev.Proto, ev.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(ev.Body)
	if err != nil {
		t.Fatal(err)
	}
	events := bufio.NewReader(zr)

	body := strings.Repeat("the quick brown fox jumps over the lazy dog. ", 40)
	for i := 1; i <= 3; i++ {
		res, err := lead.Post(ctx, nil, "sec", []byte("v1 note tls to all n=1\noutcome "+strconv.Itoa(i)+" "+body+"\n"), "")
		if err != nil {
			t.Fatalf("post %d: %v", i, err)
		}
		// The event of this post, before the next one is posted.
		for {
			line, err := events.ReadString('\n')
			if err != nil {
				t.Fatalf("event %d: %v", i, err)
			}
			if line == "id: "+strconv.FormatInt(res.Seq, 10)+"\n" {
				break
			}
		}
	}

	// History, plain and gzipped: the same bytes, each with its own ETag that revalidates.
	get := func(gz bool, inm string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/v1/rooms/sec/history", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Accept-Encoding", "identity")
		if gz {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		if inm != "" {
			req.Header.Set("If-None-Match", inm)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Proto != "HTTP/2.0" {
			t.Errorf("history over %s", resp.Proto)
		}
		if resp.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if b, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		return resp, b
	}
	pr, plain := get(false, "")
	zresp, unzipped := get(true, "")
	if pr.StatusCode != 200 || zresp.StatusCode != 200 || zresp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("history: %d and %d (%q)", pr.StatusCode, zresp.StatusCode, zresp.Header.Get("Content-Encoding"))
	}
	if !bytes.Equal(plain, unzipped) || !strings.Contains(string(plain), "#3 lead ") {
		t.Fatalf("gzipped history decompresses to other bytes:\n%s\n---\n%s", plain, unzipped)
	}
	if et := zresp.Header.Get("ETag"); et != strings.TrimSuffix(pr.Header.Get("ETag"), `"`)+`-gzip"` {
		t.Errorf("ETags %s (plain) and %s (gzip)", pr.Header.Get("ETag"), et)
	}
	if r, _ := get(true, zresp.Header.Get("ETag")); r.StatusCode != http.StatusNotModified {
		t.Errorf("gzip revalidation: %d", r.StatusCode)
	}
	if r, _ := get(false, pr.Header.Get("ETag")); r.StatusCode != http.StatusNotModified {
		t.Errorf("plain revalidation: %d", r.StatusCode)
	}

	// MCP over the same HTTPS endpoint.
	mc := sdk.NewClient(&sdk.Implementation{Name: "tls-test", Version: "v0"}, nil)
	cs, err := mc.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: s.url + "/mcp",
		HTTPClient: &http.Client{Transport: tokenTransport{tok, tr}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("MCP over TLS: %v", err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) == 0 {
		t.Fatalf("MCP tools over TLS: %v, %v", tools, err)
	}
}

// TestTLSBadConfig: a half-given pair is a usage error, and files that do not load stop the
// server at start with a message naming them, before it listens.
func TestTLSBadConfig(t *testing.T) {
	bin := parley(t)
	ca := newTestCA(t)
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.pem")
	os.WriteFile(junk, []byte("not a certificate\n"), 0o600)
	other := newTestCA(t) // a key that does not match ca's certificate

	for _, tc := range []struct {
		name string
		args []string
		env  []string
		code int
		want string
	}{
		{"cert only", []string{"--tls-cert", ca.certFile}, nil, 2, "--tls-cert is set but --tls-key is not"},
		{"key only from env", nil, []string{"PARLEY_TLS_KEY=" + ca.keyFile}, 2, "--tls-key is set but --tls-cert is not"},
		{"missing file", []string{"--tls-cert", filepath.Join(dir, "nope.pem"), "--tls-key", ca.keyFile}, nil, 1, "nope.pem"},
		{"not PEM", []string{"--tls-cert", junk, "--tls-key", ca.keyFile}, nil, 1, "junk.pem"},
		{"mismatched key", []string{"--tls-cert", ca.certFile, "--tls-key", other.keyFile}, nil, 1, "does not match"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--db", "sqlite:" + filepath.Join(t.TempDir(), "p.db")}, tc.args...)...)
			cmd.Env = servertest.CleanEnv(append(tc.env, "PARLEY_ADMIN_TOKEN="+servertest.NewToken())...)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			done := make(chan error, 1)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			go func() { done <- cmd.Wait() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("still running:\n%s", out.String())
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tc.code {
				t.Fatalf("exit %v, want code %d\n%s", err, tc.code, out.String())
			}
			if !strings.Contains(out.String(), tc.want) || strings.Contains(out.String(), "listening on") {
				t.Errorf("output does not say %q (or the server listened):\n%s", tc.want, out.String())
			}
		})
	}
}
