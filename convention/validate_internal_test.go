package convention

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// validateEvidenceBySet is validateEvidence as it was written, with a set of the done keys made
// for every message: the reference the new one, which looks over the lines of short messages,
// is held to.
func validateEvidenceBySet(m *Message) []Diagnostic {
	var diags []Diagnostic
	doneKeys := map[string]bool{}
	for _, l := range m.Lines {
		if l.Word == "done" && l.Key != "" {
			doneKeys[l.Key] = true
		}
	}
	sawDone := false
	for _, l := range m.Lines {
		switch {
		case l.Word == "done":
			sawDone = true
		case l.Word == "ev" && l.Key != "" && !doneKeys[l.Key]:
			diags = append(diags, Diagnostic{Line: l.Num, Col: l.Col(), Severity: SeverityError, Code: "ev-without-done",
				Message: "ev#" + l.Key + " has no done#" + l.Key + ": evidence must sit under the done it proves",
				Fix:     "add done#" + l.Key + " <what is finished> above it, or number the ev after its done"})
		case l.Word == "ev" && l.Key == "" && !sawDone:
			diags = append(diags, Diagnostic{Line: l.Num, Col: l.Col(), Severity: SeverityError, Code: "ev-without-done",
				Message: "ev has no done above it: evidence must sit under the done it proves",
				Fix:     "put the ev under its done, and pair them as done#1 / ev#1"})
		}
	}
	return diags
}

func checkValidateEvidence(t *testing.T, src string) {
	t.Helper()
	m, _ := Parse(src)
	if got, want := validateEvidence(m), validateEvidenceBySet(m); !reflect.DeepEqual(got, want) {
		t.Fatalf("validateEvidence(%q) = %v, the set version gives %v", src, got, want)
	}
}

// TestValidateEvidenceAsBefore compares the two on generated messages of dones and evs, keyed
// and not, short (looked over) and past 32 lines (the set).
func TestValidateEvidenceAsBefore(t *testing.T) {
	words := []string{"done#1 a", "done#2 b", "done c", "ev#1 run r", "ev#2 commit 3f9a2c1", "ev#3 run s", "ev run u", "claim#1 x", "fact"}
	r := rand.New(rand.NewPCG(25, 17))
	for range 3000 {
		n := 1 + r.IntN(8)
		if r.IntN(4) == 0 {
			n = 30 + r.IntN(10)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "v1 report x to lead n=%d\n", n)
		for range n {
			b.WriteString(words[r.IntN(len(words))] + "\n")
		}
		checkValidateEvidence(t, b.String())
	}
}

func FuzzValidateEvidence(f *testing.F) {
	f.Add("v1 report x to lead n=3\nev#2 run r\ndone#1 a\nev run u\n")
	f.Add("v1 report x to lead n=2\ndone#1 a\nev#1 run r\n")
	f.Fuzz(checkValidateEvidence)
}
