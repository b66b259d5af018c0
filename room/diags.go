package room

import (
	"fmt"

	"github.com/parleyhq/parley"
)

// MaxDiagnostics is the most diagnostics a refusal, a lint or a post's warnings list. A body
// can hold thousands of faulty lines; the first few say what to fix, and a reply that grows
// with the body would let one request make the server write megabytes.
const MaxDiagnostics = 20

// moreCode is the code of the diagnostic that stands for the ones left out.
const moreCode = "more-diagnostics"

// capDiags returns the first MaxDiagnostics of ds and how many were left out.
func capDiags(ds []parley.Diagnostic) ([]parley.Diagnostic, int) {
	if len(ds) <= MaxDiagnostics {
		return ds, 0
	}
	return ds[:MaxDiagnostics:MaxDiagnostics], len(ds) - MaxDiagnostics
}

// withMore is ds, capped, with one last diagnostic that says how many were left out (its
// More field holds the count). severity is that diagnostic's: "error" for a refusal's list.
func withMore(ds []parley.Diagnostic, more int, severity string) []parley.Diagnostic {
	if more == 0 {
		return ds
	}
	return append(ds, parley.Diagnostic{Line: 1, Col: 1, Severity: severity, Code: moreCode,
		Message: fmt.Sprintf("%d more %s not listed: only the first %d are", more, pluralWord(more, "diagnostic"), MaxDiagnostics),
		Fix:     "fix the ones listed and check again", More: more})
}

// capWarnings bounds a post's or a lint's warnings the same way.
func capWarnings(ds []parley.Diagnostic) []parley.Diagnostic {
	ds, more := capDiags(ds)
	return nonNil(withMore(ds, more, "warning"))
}

// moreOf reads Fields["more_diagnostics"] of a refusal.
func moreOf(pe *parley.Error) int {
	n, _ := pe.Fields["more_diagnostics"].(int)
	return n
}
