// Package diag holds the one Diagnostic type: a finding about a message, with its position.
// The convention and AACP parsers produce it, the room service returns it, every edge prints
// it. It is its own package so that the libraries and the server share it without either
// importing the other; parley.Diagnostic, convention.Diagnostic and aacp.Diagnostic are
// aliases of it.
package diag

import "strconv"

// Diagnostic is one finding about a message. Line and Col are 1-based; Col counts bytes.
//
// In JSON an empty Fix and a zero More are left out, as the HTTP API has always written
// them.
type Diagnostic struct {
	Line     int    `json:"line"`
	Col      int    `json:"col"`
	Severity string `json:"severity"`      // SeverityError or SeverityWarning
	Code     string `json:"code"`          // stable, kebab-case: "n-mismatch", "date-format", …
	Message  string `json:"message"`       // what is wrong, in one sentence
	Fix      string `json:"fix,omitempty"` // the rewrite where one exists, else how to fix it; may be ""
	// More is set only on the last diagnostic of a list that was cut (code
	// "more-diagnostics"): how many were left out.
	More int `json:"more,omitempty"`
}

// Severities.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// String formats d like a compiler diagnostic, without a file name:
// `1:27: error: n=10 but the message has 9 fact lines [n-mismatch]`.
func (d Diagnostic) String() string {
	return strconv.Itoa(d.Line) + ":" + strconv.Itoa(d.Col) + ": " + d.Severity + ": " + d.Message + " [" + d.Code + "]"
}
