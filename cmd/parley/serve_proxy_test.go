package main

import (
	"strings"
	"testing"
)

func TestParseProxySetup(t *testing.T) {
	p, err := parseProxySetup("https://Parley.Example.test:8443/", []string{"parley.internal", "Other.Internal.:7070"}, []string{"127.0.0.1", "10.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	if p.origin != "https://parley.example.test:8443" || strings.Join(p.hosts, " ") != "parley.example.test parley.internal other.internal" || !p.https() {
		t.Errorf("origin %q hosts %q https %v", p.origin, p.hosts, p.https())
	}
	if !p.trusted.Contains("10.2.3.4:80") || p.trusted.Contains("192.168.1.1:80") {
		t.Errorf("trusted %s", p.trusted)
	}
	for _, bad := range []struct {
		url          string
		hosts, trust []string
		want         string
	}{
		{"parley.example.com", nil, nil, "--public-url"},
		{"ftp://parley.example.com", nil, nil, "--public-url"},
		{"https://parley.example.com/parley", nil, nil, "path prefix"},
		{"", []string{"https://x.example"}, nil, "--allow-host"},
		{"", nil, []string{"10.0.0.0/40"}, "--trusted-proxy"},
	} {
		if _, err := parseProxySetup(bad.url, bad.hosts, bad.trust); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q %q %q: %v, want an error naming %s", bad.url, bad.hosts, bad.trust, err, bad.want)
		}
	}
}
