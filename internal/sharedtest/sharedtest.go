// Package sharedtest decides what a test does when the shared folder (../shared beside
// the repository: design docs, study fixtures, corpora) is absent: it skips with the
// reason, except under PARLEY_TEST_REQUIRE_ALL=1 (as in CI), where the test fails, so a
// run cannot go green without its strongest checks.
package sharedtest

import (
	"os"
	"testing"
)

// EnvRequireAll is the variable that turns skips for missing resources into failures
// (internal/pgtest reads the same one).
const EnvRequireAll = "PARLEY_TEST_REQUIRE_ALL"

// RequireAll reports whether missing shared data must fail the test.
func RequireAll() bool { return os.Getenv(EnvRequireAll) == "1" }

// Absent ends the test because shared data is missing: a skip with the message, or a
// failure under PARLEY_TEST_REQUIRE_ALL=1.
func Absent(tb testing.TB, format string, args ...any) {
	tb.Helper()
	if RequireAll() {
		tb.Fatalf(EnvRequireAll+"=1 and shared data is missing: "+format, args...)
	}
	tb.Skipf(format, args...)
}
