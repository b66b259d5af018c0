package convention

import (
	"cmp"
	"slices"
	"strings"
)

// Check parses src, validates it and lints it, and returns every diagnostic sorted by
// position (errors before warnings at the same position).
func Check(src string, opt Options) (*Message, []Diagnostic) {
	m, diags := Parse(src)
	diags = append(diags, Validate(m, opt)...)
	diags = append(diags, Lint(m, opt)...)
	SortDiagnostics(diags)
	return m, diags
}

// SortDiagnostics orders diagnostics by line, column, then errors first, then code, keeping
// the order of those equal in all four.
func SortDiagnostics(diags []Diagnostic) {
	if len(diags) < 2 {
		return
	}
	slices.SortStableFunc(diags, compareDiagnostics)
}

// compareDiagnostics is SortDiagnostics' order.
func compareDiagnostics(a, b Diagnostic) int {
	if a.Line != b.Line {
		return cmp.Compare(a.Line, b.Line)
	}
	if a.Col != b.Col {
		return cmp.Compare(a.Col, b.Col)
	}
	if a.Severity != b.Severity {
		switch SeverityError {
		case a.Severity:
			return -1
		case b.Severity:
			return 1
		}
		return 0 // neither is an error: no order between them
	}
	return strings.Compare(a.Code, b.Code)
}

// HasError reports whether any diagnostic is an error.
func HasError(diags []Diagnostic) bool {
	for _, d := range diags {
		if d.Severity == SeverityError {
			return true
		}
	}
	return false
}
