package trace

import (
	"strings"
	"testing"
)

// rawSessionsText writes sessions as "id: record record …" lines, each record in
// non-canonical form (AppendCanonical would hide a reordering), so that tests compare
// exactly what ReadSessions kept.
func rawSessionsText(ss []RawSession) string {
	var b strings.Builder
	for _, s := range ss {
		b.WriteString(s.ID + ":")
		for i := range s.Records {
			b.WriteString(" " + compact(&s.Records[i]))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// compact writes a value keeping member order and duplicates.
func compact(v *Value) string {
	switch v.Kind {
	case Object:
		parts := make([]string, len(v.Members))
		for i := range v.Members {
			parts[i] = string(AppendQuoted(nil, v.Members[i].Key)) + ":" + compact(&v.Members[i].Value)
		}
		return "{" + strings.Join(parts, ",") + "}"
	case Array:
		parts := make([]string, len(v.Items))
		for i := range v.Items {
			parts[i] = compact(&v.Items[i])
		}
		return "[" + strings.Join(parts, ",") + "]"
	case String:
		return string(AppendQuoted(nil, v.Str))
	case Null:
		return "null"
	}
	return v.Str
}

func TestReadSessions(t *testing.T) {
	long := strings.Repeat("x", 200_000) // past bufio.Scanner's default 64 KiB line limit
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"blank lines only", "\n  \n\t\n", ""},
		{"session lines come back in canonical member order",
			`{"id":"a","records":[{"text":"hi","kind":"message","from":"u"}]}` + "\n" +
				`{"records":[],"id":"b"}` + "\n",
			`a: {"from":"u","kind":"message","text":"hi"}` + "\n" + "b:\n"},
		{"a session line without id has an empty id",
			`{"records":[{"kind":"final"}]}`,
			`: {"kind":"final"}` + "\n"},
		{"bare records are kept as written and form one session",
			`{"z":1,"a":[true,null],"z":"dup"}` + "\n\n" + `{"kind":"anything","extra":{"b":1,"a":2}}` + "\n",
			`stdin: {"z":1,"a":[true,null],"z":"dup"} {"kind":"anything","extra":{"b":1,"a":2}}` + "\n"},
		{"the bare-record session sits where its first line was",
			`{"id":"s1","records":[{"kind":"plan"}]}` + "\n" +
				`{"n":1}` + "\n" +
				`{"id":"s2","records":[{"kind":"final"}]}` + "\n" +
				`{"n":2}` + "\n",
			`s1: {"kind":"plan"}` + "\n" + `stdin: {"n":1} {"n":2}` + "\n" + `s2: {"kind":"final"}` + "\n"},
		{"records that is not an array makes a bare record",
			`{"id":"x","records":"no"}`,
			`stdin: {"id":"x","records":"no"}` + "\n"},
		{"surrounding space and CRLF are trimmed",
			"  {\"n\":1}\r\n",
			`stdin: {"n":1}` + "\n"},
		{"long lines",
			`{"id":"big","records":[{"kind":"message","text":"` + long + `"}]}`,
			`big: {"kind":"message","text":"` + long + `"}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ss, err := ReadSessions(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := rawSessionsText(ss); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestReadSessionsErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"not JSON, counted with the blank lines before it", "{\"n\":1}\n\n{oops\n", "line 3: json: offset 1:"},
		{"not an object", "[1,2]\n", "line 1: want a session or a record object"},
		{"a string", "\"hi\"\n", "line 1: want a session or a record object"},
		{"trailing garbage", "{\"n\":1} x\n", "line 1: json:"},
		{"a session line with a record that is not a trace record",
			"\n" + `{"id":"a","records":[{"kind":"plan"},{"kind":"plan","colour":"red"}]}`,
			`line 2: record 1: trace: unknown record field "colour"`},
		{"a session record without kind", `{"id":"a","records":[{"text":"x"}]}`, "line 1: record 0: trace: record has no kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ss, err := ReadSessions(strings.NewReader(tt.in))
			if err == nil {
				t.Fatalf("no error; got %d sessions", len(ss))
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error %q, want it to start with %q", err, tt.want)
			}
		})
	}
}

// TestReadSessionsRoundTripsNormalize: what Session.Value writes (the normalize line
// format), ReadSessions reads back record for record.
func TestReadSessionsRoundTripsNormalize(t *testing.T) {
	ss := Synthetic(5, 4)
	var b strings.Builder
	for i := range ss {
		v := ss[i].Value()
		b.Write(AppendCanonical(nil, &v))
		b.WriteByte('\n')
	}
	got, err := ReadSessions(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ss) {
		t.Fatalf("%d sessions, want %d", len(got), len(ss))
	}
	for i := range ss {
		if got[i].ID != ss[i].ID || len(got[i].Records) != len(ss[i].Records) {
			t.Fatalf("session %d: id %q with %d records, want %q with %d", i, got[i].ID, len(got[i].Records), ss[i].ID, len(ss[i].Records))
		}
		for j := range ss[i].Records {
			if g, w := string(Canonical(&got[i].Records[j])), string(ss[i].Records[j].Canonical()); g != w {
				t.Errorf("session %d record %d:\n got %s\nwant %s", i, j, g, w)
			}
		}
	}
}
