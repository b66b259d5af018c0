package bpe

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/parleyhq/parley/internal/sharedtest"
)

// TestBigEndian runs this package's exactness tests on a big-endian machine, s390x under
// qemu's user-mode emulator: the tokenizer reads bytes four and eight at a time, and a load
// that assumed little-endian order made wrong tokens there while every test passed here.
// It needs qemu-s390x (Debian: apt-get install qemu-user); without it, it is skipped, except
// under PARLEY_TEST_REQUIRE_ALL=1 (CI).
func TestBigEndian(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the package's tests for s390x: not with -short")
	}
	if os.Getenv("PARLEY_BPE_BIGENDIAN_CHILD") != "" || runtime.GOARCH == "s390x" {
		t.Skip("already on the emulated machine")
	}
	qemu, err := exec.LookPath("qemu-s390x")
	if err != nil {
		if sharedtest.RequireAll() {
			t.Fatal("qemu-s390x is not installed (PARLEY_TEST_REQUIRE_ALL=1): apt-get install qemu-user")
		}
		t.Skip("qemu-s390x is not installed (apt-get install qemu-user): the big-endian run is skipped")
	}
	bin := filepath.Join(t.TempDir(), "bpe.test")
	build := exec.Command("go", "test", "-c", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOARCH=s390x", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the tests for s390x: %v\n%s", err, out)
	}
	// The tests that compare tokens with the golden vectors, tiktoken's own and the one-run
	// merge, over every path: short pieces, the cache, cut pieces, long runs, the split.
	run := exec.Command(qemu, bin, "-test.run", "^(TestGoldenCases|TestTiktokenVectors|TestCountPiece|TestCutMerge|TestLongWord|TestLongRuns|TestSplitOracle|TestLongSpaceRuns|TestUnits)$")
	run.Env = append(os.Environ(), "PARLEY_BPE_BIGENDIAN_CHILD=1")
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("the tests on s390x (big-endian) failed: %v\n%s", err, out)
	}
	t.Logf("s390x: %s", lastLine(out))
}

// lastLine is the last line of a test binary's output (its verdict).
func lastLine(b []byte) string {
	out := strings.TrimRight(string(b), "\n")
	return out[strings.LastIndexByte(out, '\n')+1:]
}
