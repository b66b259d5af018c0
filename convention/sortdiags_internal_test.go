package convention

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"testing"
)

// sortDiagnosticsBySlice is SortDiagnostics as it was written, with sort.SliceStable and a
// less function: the reference for the order and for what stays in place.
func sortDiagnosticsBySlice(diags []Diagnostic) {
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

// TestSortDiagnosticsAsBefore sorts generated lists both ways: few lines, columns and codes,
// so that ties abound, three severities (one neither error nor warning), and Message telling
// apart diagnostics that tie in all four keys, so that a change of their order shows.
func TestSortDiagnosticsAsBefore(t *testing.T) {
	sev := []string{SeverityError, SeverityWarning, "info"}
	codes := []string{"a", "b", "date-format", ""}
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		n := r.IntN(40)
		got := make([]Diagnostic, n)
		for i := range got {
			got[i] = Diagnostic{Line: r.IntN(4), Col: r.IntN(3), Severity: sev[r.IntN(len(sev))], Code: codes[r.IntN(len(codes))], Message: string(rune('A' + i))}
		}
		want := slices.Clone(got)
		SortDiagnostics(got)
		sortDiagnosticsBySlice(want)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("SortDiagnostics:\n got %v\nwant %v", got, want)
		}
	}
}
