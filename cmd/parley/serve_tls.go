package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// certFiles serves the certificate of --tls-cert and --tls-key, loaded at start and loaded
// again when either file changes (a renewal writes new files in place), checked at most once
// every reloadEvery. A renewed pair that does not load (a renewal caught half written, a key
// that does not match) is logged and the server keeps the certificate it has, which is
// still valid until it expires, rather than failing every handshake; it tries again at the
// next change.
type certFiles struct {
	certPath, keyPath string
	log               *slog.Logger // nil: slog.Default()

	mu      sync.Mutex
	cert    *tls.Certificate
	stamp   string // the two files' sizes and modification times when cert was loaded
	checked time.Time
}

const reloadEvery = 10 * time.Second

// loadTLS loads the pair of --tls-cert and --tls-key; nil, nil when neither is set.
func loadTLS(certPath, keyPath string) (*certFiles, error) {
	switch {
	case certPath == "" && keyPath == "":
		return nil, nil
	case certPath == "":
		return nil, usageErrorf("--tls-key is set but --tls-cert is not: HTTPS needs both (or set neither for plain HTTP)")
	case keyPath == "":
		return nil, usageErrorf("--tls-cert is set but --tls-key is not: HTTPS needs both (or set neither for plain HTTP)")
	}
	c := &certFiles{certPath: certPath, keyPath: keyPath}
	cert, stamp, err := c.load()
	if err != nil {
		return nil, &exitError{code: 1, msg: err.Error()}
	}
	c.cert, c.stamp, c.checked = cert, stamp, time.Now()
	return c, nil
}

func (c *certFiles) fileStamp() (string, error) {
	var stamp string
	for _, p := range []string{c.certPath, c.keyPath} {
		st, err := os.Stat(p)
		if err != nil {
			return "", err
		}
		stamp += fmt.Sprintf("%d:%d;", st.Size(), st.ModTime().UnixNano())
	}
	return stamp, nil
}

func (c *certFiles) load() (*tls.Certificate, string, error) {
	stamp, err := c.fileStamp()
	if err != nil {
		return nil, "", fmt.Errorf("TLS: %v", err)
	}
	cert, err := tls.LoadX509KeyPair(c.certPath, c.keyPath)
	if err != nil {
		return nil, "", fmt.Errorf("TLS: load the certificate %s and key %s: %v\nhint: both must be PEM files, the key matching the certificate's public key", c.certPath, c.keyPath, err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return nil, "", fmt.Errorf("TLS: parse the certificate in %s: %v", c.certPath, err)
	}
	cert.Leaf = leaf
	return &cert, stamp, nil
}

// get is the tls.Config's GetCertificate.
func (c *certFiles) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.checked) >= reloadEvery {
		c.checked = time.Now()
		if stamp, err := c.fileStamp(); err == nil && stamp != c.stamp {
			log := c.log
			if log == nil {
				log = slog.Default()
			}
			if cert, stamp, err := c.load(); err == nil {
				c.cert, c.stamp = cert, stamp
				log.Info("TLS: loaded the renewed certificate", "cert", c.certPath, "subject", cert.Leaf.Subject.String(), "not_after", cert.Leaf.NotAfter)
			} else {
				c.stamp = stamp // logged once per change, not at every handshake
				log.Warn("TLS: the changed certificate files do not load; keeping the current certificate", "err", err)
			}
		}
	}
	return c.cert, nil
}
