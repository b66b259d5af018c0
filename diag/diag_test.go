package diag_test

import (
	"encoding/json"
	"testing"

	"github.com/parleyhq/parley/diag"
)

// The HTTP API's bytes: fields in this order, an empty fix and a zero more left out.
func TestJSON(t *testing.T) {
	tests := []struct {
		d    diag.Diagnostic
		want string
	}{
		{diag.Diagnostic{Line: 2, Col: 17, Severity: diag.SeverityWarning, Code: "emoji", Message: "m"},
			`{"line":2,"col":17,"severity":"warning","code":"emoji","message":"m"}`},
		{diag.Diagnostic{Line: 1, Col: 1, Severity: diag.SeverityError, Code: "more-diagnostics", Message: "m", Fix: "f", More: 3},
			`{"line":1,"col":1,"severity":"error","code":"more-diagnostics","message":"m","fix":"f","more":3}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.d)
		if err != nil || string(b) != tt.want {
			t.Errorf("json %s (%v), want %s", b, err, tt.want)
		}
	}
}

func TestString(t *testing.T) {
	d := diag.Diagnostic{Line: 1, Col: 27, Severity: diag.SeverityError, Code: "n-mismatch", Message: "n=10 but the message has 9 fact lines"}
	if got, want := d.String(), "1:27: error: n=10 but the message has 9 fact lines [n-mismatch]"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
