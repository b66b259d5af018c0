package convention

import (
	"strings"
	"testing"
)

// parseEvidenceByFields is ParseEvidence as it was written with strings.Fields: the reference
// FuzzParseEvidence holds it to.
func parseEvidenceByFields(text string) (kind, ref, branch string) {
	f := strings.Fields(text)
	if len(f) < 2 {
		return "", "", ""
	}
	switch f[0] {
	case "commit":
		sha := strings.TrimRight(f[1], ",;.")
		if !IsHexSHA(sha) {
			return "", "", ""
		}
		if len(f) >= 3 && f[2] == "on" {
			rest := f[3:]
			if len(rest) >= 1 && rest[0] == "branch" {
				rest = rest[1:]
			}
			if len(rest) >= 1 {
				branch = strings.TrimRight(rest[0], ",;")
			}
		}
		return EvidenceCommit, strings.ToLower(sha), branch
	case "run":
		id := strings.TrimRight(f[1], ",;.")
		if !validKey(id) && !validRunID(id) {
			return "", "", ""
		}
		return EvidenceRun, id, ""
	}
	return "", "", ""
}

var evidenceSeeds = []string{"", "run", "run load-17", " run\tci:42/a, tail", "commit 3F9A2C1", "commit 3f9a2c1 on feat/x",
	"commit 3f9a2c1 on branch feat/x;", "commit 3f9a2c1 on branch", "commit 3f9a2c1 on", "commit 3f9a2c1 off main",
	"commit\u00a03f9a2c1\u2003on\u3000main", "commit xyz", "Run r", "run \xff", "run a b c d e f", "commit 3f9a2c1. on main"}

func checkParseEvidence(t *testing.T, s string) {
	t.Helper()
	k, r, b := ParseEvidence(s)
	wk, wr, wb := parseEvidenceByFields(s)
	if k != wk || r != wr || b != wb {
		t.Errorf("ParseEvidence(%q) = %q %q %q, the strings.Fields version gives %q %q %q", s, k, r, b, wk, wr, wb)
	}
}

func TestParseEvidenceFields(t *testing.T) {
	for _, s := range evidenceSeeds {
		checkParseEvidence(t, s)
	}
	// Hand-worked: the branch after "on branch", the sha lowered.
	if k, r, b := ParseEvidence("  commit 3F9A2C1 on branch feat/x,"); k != EvidenceCommit || r != "3f9a2c1" || b != "feat/x" {
		t.Errorf("got %q %q %q", k, r, b)
	}
}

func FuzzParseEvidence(f *testing.F) {
	for _, s := range evidenceSeeds {
		f.Add(s)
	}
	f.Fuzz(checkParseEvidence)
}
