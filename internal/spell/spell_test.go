package spell

import "testing"

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"fetch", "fetch", 0}, {"FTECH", "FETCH", 1}, {"reqs", "req", 1},
		{"must_not", "must-not", 1}, {"kitten", "sitting", 3}, {"", "abc", 3}, {"ünï", "uni", 2},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (not symmetric)", c.b, c.a, got, c.want)
		}
	}
}

func TestNearest(t *testing.T) {
	names := []string{"lead", "builder", "yu", "FETCH", "RESOLVE"}
	for s, want := range map[string]string{
		"Lead": "lead", "buidler": "builder", "ftech": "FETCH", "resolv": "RESOLVE",
		"zzz": "", "bob": "", "yo": "yu",
	} {
		if got := Nearest(s, names); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", s, got, want)
		}
	}
}
