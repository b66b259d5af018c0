package pgtest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// noPostgresEnv makes TestNoPostgresChild look for PostgreSQL where there is none.
const noPostgresEnv = "PARLEY_PGTEST_NONE"

func TestNoPostgresChild(t *testing.T) {
	if os.Getenv(noPostgresEnv) == "" {
		t.Skip("run by TestNoPostgres")
	}
	binGlob = t.TempDir() + "/*/bin"
	DSN(t)
	t.Log("DSN returned")
}

// TestNoPostgres checks that without PostgreSQL DSN skips the test and says how to get one,
// and that PARLEY_TEST_REQUIRE_ALL=1 turns the skip into a failure.
func TestNoPostgres(t *testing.T) {
	for _, tt := range []struct {
		require string
		want    string
		fails   bool
	}{
		{"", "--- SKIP: TestNoPostgresChild", false},
		{"1", "--- FAIL: TestNoPostgresChild", true},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestNoPostgresChild$", "-test.v", "-test.count=1")
		cmd.Env = []string{noPostgresEnv + "=1", "PATH=", "HOME=" + t.TempDir(), EnvRequireAll + "=" + tt.require}
		out, err := cmd.CombinedOutput()
		if (err != nil) != tt.fails {
			t.Errorf("%s=%q: err = %v, want failure %v\n%s", EnvRequireAll, tt.require, err, tt.fails, out)
		}
		for _, want := range []string{tt.want, "no PostgreSQL: set " + EnvDSN, "apt-get install -y postgresql"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("%s=%q: output lacks %q:\n%s", EnvRequireAll, tt.require, want, out)
			}
		}
		if strings.Contains(string(out), "DSN returned") {
			t.Errorf("%s=%q: DSN returned without PostgreSQL", EnvRequireAll, tt.require)
		}
	}
}
