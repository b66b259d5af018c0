package convention

import "sort"

// Check parses src, validates it and lints it, and returns every diagnostic sorted by
// position (errors before warnings at the same position).
func Check(src string, opt Options) (*Message, []Diagnostic) {
	m, diags := Parse(src)
	diags = append(diags, Validate(m, opt)...)
	diags = append(diags, Lint(m, opt)...)
	SortDiagnostics(diags)
	return m, diags
}

// SortDiagnostics orders diagnostics by line, column, then errors first, then code.
func SortDiagnostics(diags []Diagnostic) {
	sort.SliceStable(diags, func(i, j int) bool {
		a, b := diags[i], diags[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Col != b.Col {
			return a.Col < b.Col
		}
		if a.Severity != b.Severity {
			return a.Severity == SeverityError
		}
		return a.Code < b.Code
	})
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
