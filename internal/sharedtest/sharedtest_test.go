package sharedtest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestAbsent runs a test that calls Absent in a child process, with and without
// PARLEY_TEST_REQUIRE_ALL=1, and reads its verdict.
func TestAbsent(t *testing.T) {
	if os.Getenv("SHAREDTEST_CHILD") == "1" {
		Absent(t, "nothing at %s", "/nowhere")
		return
	}
	for _, tt := range []struct {
		require string
		fail    bool
	}{{"", false}, {"0", false}, {"1", true}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAbsent$", "-test.v")
		cmd.Env = append(os.Environ(), "SHAREDTEST_CHILD=1", EnvRequireAll+"="+tt.require)
		out, err := cmd.CombinedOutput()
		failed := err != nil
		if failed != tt.fail {
			t.Errorf("%s=%q: failed=%v, want %v\n%s", EnvRequireAll, tt.require, failed, tt.fail, out)
		}
		if !tt.fail && !strings.Contains(string(out), "--- SKIP") {
			t.Errorf("%s=%q: want a skip\n%s", EnvRequireAll, tt.require, out)
		}
		if !strings.Contains(string(out), "nothing at /nowhere") {
			t.Errorf("the message is lost:\n%s", out)
		}
	}
}
