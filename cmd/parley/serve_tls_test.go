package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// writeSelfSigned writes a self-signed certificate for name and its key as PEM files.
func writeSelfSigned(t *testing.T, certFile, keyFile, name string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		DNSNames: []string{name}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestCertReload: a renewed pair written over the files is served from the next check on;
// a pair that does not load leaves the current certificate in place.
func TestCertReload(t *testing.T) {
	dir := t.TempDir()
	cf, kf := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writeSelfSigned(t, cf, kf, "one.test")
	c, err := loadTLS(cf, kf)
	if err != nil {
		t.Fatal(err)
	}
	c.log = slog.New(slog.DiscardHandler)
	name := func() string {
		t.Helper()
		cert, err := c.get(nil)
		if err != nil {
			t.Fatal(err)
		}
		return cert.Leaf.Subject.CommonName
	}
	if n := name(); n != "one.test" {
		t.Fatalf("serves %s", n)
	}
	writeSelfSigned(t, cf, kf, "two.test")
	later := time.Now().Add(time.Minute) // a distinct modification time whatever the clock's grain
	os.Chtimes(cf, later, later)
	if n := name(); n != "one.test" {
		t.Errorf("reloaded before the check interval: %s", n)
	}
	c.checked = time.Time{}
	if n := name(); n != "two.test" {
		t.Errorf("after a renewal: serves %s", n)
	}
	// A half-written renewal: the key file is empty.
	os.WriteFile(kf, nil, 0o600)
	c.checked = time.Time{}
	if n := name(); n != "two.test" {
		t.Errorf("after a broken renewal: serves %s", n)
	}
}

func TestLoadTLSErrors(t *testing.T) {
	dir := t.TempDir()
	cf, kf := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writeSelfSigned(t, cf, kf, "one.test")
	if c, err := loadTLS("", ""); c != nil || err != nil {
		t.Errorf("neither: %v, %v", c, err)
	}
	for _, tc := range []struct {
		cert, key string
		code      int
	}{
		{cf, "", 2},
		{"", kf, 2},
		{cf, cf, 1},
		{filepath.Join(dir, "missing.pem"), kf, 1},
	} {
		_, err := loadTLS(tc.cert, tc.key)
		ee, ok := err.(*exitError)
		if !ok || ee.code != tc.code {
			t.Errorf("loadTLS(%q, %q): %v, want exit %d", tc.cert, tc.key, err, tc.code)
		}
	}
}
