package evidence

import "testing"

var aboutTestsSeeds = []string{"limiter lib/rate-limit.ts sliding window", "unit tests pass", "TESTING", "12 CASES",
	"teſts", "paſſing", "the suite is green", "spec", "contest", "passport", "showcases", "", "te\xffst", "t\u00e9st", "ſpecs"}

func checkAboutTests(t *testing.T, s string) {
	t.Helper()
	if got, want := AboutTests(s), testWords.MatchString(s); got != want {
		t.Errorf("AboutTests(%q) = %v, testWords says %v", s, got, want)
	}
}

// TestAboutTestsAsExpression holds AboutTests, which asks the expression only past its stems,
// to the expression alone; and checks that the stems do skip a plain done line.
func TestAboutTestsAsExpression(t *testing.T) {
	for _, s := range aboutTestsSeeds {
		checkAboutTests(t, s)
	}
	if mentionsTestStem("limiter lib/rate-limit.ts sliding window") {
		t.Error("a done line with no word of testWords passed the stems")
	}
}

func FuzzAboutTests(f *testing.F) {
	for _, s := range aboutTestsSeeds {
		f.Add(s)
	}
	f.Fuzz(checkAboutTests)
}
