package lint

import (
	"testing"

	"github.com/parleyhq/parley/convention"
)

// bytesCounter counts a token per byte: the tests below need a counter, not a tokenizer.
type bytesCounter struct{}

func (bytesCounter) Count(s string) int { return len(s) }

// TestMessage checks the format each kind of message is read as and its headline finding,
// worked by hand.
func TestMessage(t *testing.T) {
	for _, tc := range []struct {
		text, format, code string
		severity           string
	}{
		{"", FormatText, "empty", convention.SeverityError},
		{"v1 report limiter to lead n=2\ndone#1 limiter built", FormatConvention, "n-mismatch", convention.SeverityError},
		{"REPORT|IT|return:builder|p:1|aacp:1.1|done", FormatAACP, "", ""},
		{`{"status":"done","task":"limiter"}`, FormatJSON, "format", convention.SeverityWarning},
		{"I built the limiter, tests pass.", FormatText, "format", convention.SeverityWarning},
	} {
		format, diags := Message(tc.text, nil, bytesCounter{})
		if format != tc.format || diags == nil {
			t.Errorf("%q: format %q (diags %v), want %q", tc.text, format, diags, tc.format)
			continue
		}
		if tc.code == "" {
			continue
		}
		found := false
		for _, d := range diags {
			found = found || d.Code == tc.code && d.Severity == tc.severity
		}
		if !found {
			t.Errorf("%q: no %s %s in %+v", tc.text, tc.severity, tc.code, diags)
		}
	}
	// The plain-text estimate: 32 "tokens" (bytes) × 414/635, rounded, is 21.
	_, diags := Message("I built the limiter, tests pass.", nil, bytesCounter{})
	if want := "plain text (32 tokens): a convention message would carry the same facts in about 21 "; len(diags) != 1 || len(diags[0].Message) < len(want) || diags[0].Message[:len(want)] != want {
		t.Errorf("estimate: %+v", diags)
	}
}
