package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/mock"
)

func TestParseDB(t *testing.T) {
	tests := []struct {
		in, kind, target string
		bad              bool
	}{
		{"sqlite:parley.db", "sqlite", "parley.db", false},
		{"sqlite:///var/lib/parley.db", "sqlite", "/var/lib/parley.db", false},
		{"data/parley.db", "sqlite", "data/parley.db", false},
		{"postgres://u@h/db", "postgres", "postgres://u@h/db", false},
		{"postgresql://u@h/db?sslmode=disable", "postgres", "postgresql://u@h/db?sslmode=disable", false},
		{"mysql://u@h/db", "", "", true},
		{"sqlite:", "", "", true},
		{"host=127.0.0.1 port=5432 user=postgres dbname=parley", "", "", true},
	}
	for _, tt := range tests {
		kind, target, err := parseDB(tt.in)
		if (err != nil) != tt.bad || kind != tt.kind || target != tt.target {
			t.Errorf("parseDB(%q) = %q, %q, %v", tt.in, kind, target, err)
		}
	}
}

// TestAdminToken checks that a first start creates and prints a token, keeps only its hash
// (0600), and that later starts reuse it without printing anything.
func TestAdminToken(t *testing.T) {
	db := filepath.Join(t.TempDir(), "parley.db")
	var out bytes.Buffer
	e := &env{stdout: &out, stderr: &out, getenv: func(string) string { return "" }}
	first, err := adminToken(e, "sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`export PARLEY_ADMIN_TOKEN=(pk_[A-Za-z0-9_-]{43})\n`).FindStringSubmatch(out.String())
	if m == nil || first.hash == nil || first.token != "" {
		t.Fatalf("first start: %+v\n%s", first, out.String())
	}
	st, err := os.Stat(db + ".admin")
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("hash file: %v, %v", st, err)
	}
	if b, _ := os.ReadFile(db + ".admin"); strings.Contains(string(b), m[1]) {
		t.Fatal("the token itself was stored")
	}

	out.Reset()
	again, err := adminToken(e, "sqlite", db)
	if err != nil || !bytes.Equal(again.hash, first.hash) || out.Len() != 0 {
		t.Fatalf("restart: %+v %v, printed %q", again, err, out.String())
	}

	svc := &mock.RoomService{AuthenticateFn: func(ctx context.Context, token string) (*parley.Caller, error) {
		return nil, parley.Errorf(parley.EUNAUTHORIZED, "unknown token")
	}}
	gate := &adminGate{RoomService: svc, hash: again.hash}
	if c, err := gate.Authenticate(t.Context(), m[1]); err != nil || !c.Admin {
		t.Errorf("the printed token is not the admin's: %v %v", c, err)
	}
	if _, err := gate.Authenticate(t.Context(), m[1]+"x"); parley.ErrorCode(err) != parley.EUNAUTHORIZED {
		t.Errorf("another token: %v", err)
	}

	os.WriteFile(db+".admin", []byte("garbage\n"), 0o600)
	if _, err := adminToken(e, "sqlite", db); err == nil || !strings.Contains(err.Error(), "delete it") {
		t.Errorf("a corrupt hash file: %v", err)
	}

	fromEnv := func(k string) string {
		if k == "PARLEY_ADMIN_TOKEN" {
			return "from-the-environment-123"
		}
		return ""
	}
	if a, err := adminToken(&env{stdout: &out, getenv: fromEnv}, "postgres", "postgres://x"); err != nil || a.token != "from-the-environment-123" {
		t.Errorf("from the environment: %+v %v", a, err)
	}
	if _, err := adminToken(e, "postgres", "postgres://x"); err == nil || !strings.Contains(err.Error(), "PARLEY_ADMIN_TOKEN") {
		t.Errorf("postgres without PARLEY_ADMIN_TOKEN: %v", err)
	}
}
