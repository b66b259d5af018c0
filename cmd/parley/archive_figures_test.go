package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/pgtest"
	"github.com/parleyhq/parley/internal/servertest"
	"github.com/parleyhq/parley/sqlite"
)

// TestMoveFigures times backup, export and import of a large room (1,500 messages of 60 KB, 90
// MB of history), into SQLite and PostgreSQL. It runs only with PARLEY_FIGURES=1:
//
//	PARLEY_FIGURES=1 go test ./cmd/parley -run TestMoveFigures -v
func TestMoveFigures(t *testing.T) {
	if os.Getenv("PARLEY_FIGURES") != "1" {
		t.Skip("set PARLEY_FIGURES=1 to measure")
	}
	const n, size = 1500, 60 << 10
	dir := t.TempDir()
	path := filepath.Join(dir, "parley.db")
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	p := parley.DefaultPolicy()
	p.MaxMessageBytes = 1 << 20
	if err := st.CreateRoom(t.Context(), &parley.Room{Name: "big", Policy: p, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("x", 99) + "\n"
	for i := range n {
		body := fmt.Sprintf("v1 note big to all n=1\n%s", strings.Repeat(line, size/100))
		body = fmt.Sprintf("%s%d\n", body, i)
		if _, err := st.Append(context.Background(), &parley.Append{Message: &parley.Message{Room: "big", Seat: "lead",
			Time: time.Now(), Format: "convention", Topic: "big", Intent: "note", Body: body, Tokens: size / 4}}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	lite := servertest.InProcess(t, servertest.InProcessOptions{DBPath: path})
	start := time.Now()
	if code, out, errOut := runBackupCLI(t, "--db", path, filepath.Join(dir, "backup.db")); code != 0 {
		t.Fatalf("backup: %s%s", out, errOut)
	} else {
		t.Logf("backup: %s", strings.TrimSpace(out))
	}
	start = time.Now()
	code, exported, errOut := runAdmin(t, lite, nil, "export", "big")
	if code != 0 {
		t.Fatalf("export: %s", errOut)
	}
	t.Logf("export of %d messages: %d bytes in %s", n, len(exported), time.Since(start).Round(time.Millisecond))
	for _, target := range []struct {
		name string
		opts servertest.InProcessOptions
	}{{"sqlite", servertest.InProcessOptions{}}, {"postgres", servertest.InProcessOptions{PostgresDSN: pgtest.DSN(t)}}} {
		s := servertest.InProcess(t, target.opts)
		start = time.Now()
		if code, out, errOut := runAdmin(t, s, []byte(exported), "import", "-"); code != 0 {
			t.Fatalf("import into %s: %s%s", target.name, out, errOut)
		}
		t.Logf("import into %s: %s", target.name, time.Since(start).Round(time.Millisecond))
	}
}
