package aacp

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ from the current output")

func TestEncode(t *testing.T) {
	tests := []struct {
		name, request, want string
	}{
		{"the specification's FETCH",
			`{"task":"FETCH","dom":"HR","fmt":"json","filter":{"status":"active"},"period":"2024-08","res":"emp_salary","aacp":"1.1","p":1,"return":"HR-Agent"}`,
			"FETCH|HR|return:HR-Agent|p:1|aacp:1.1|res:emp_salary|period:2024-08|filter:status=active|fmt:json"},
		{"lists, spaces, numbers as written, aacp added",
			`{"task":"BUILD","dom":"IT","return":"IT-Agent","p":1,"res":"ad_account","filter":"usr=j.smith","fields":["email","dept","grp","pwd_reset"],"amt":1.50}`,
			"BUILD|IT|return:IT-Agent|p:1|aacp:1.1|res:ad_account|filter:usr=j.smith|fields:email,dept,grp,pwd_reset|amt:1.50"},
		{"object with a list inside, to early, unknown keys last and sorted",
			`{"dom":"IT","task":"BUILD","zeta":"z","to":"builder","return":"lead","alpha":"a","terms":{"must_not":["push to main","add dependencies"],"deadline":"20260919T1200Z"}}`,
			"BUILD|IT|return:lead|aacp:1.1|to:builder|terms:deadline=20260919T1200Z,must_not=push_to_main+add_dependencies|alpha:a|zeta:z"},
		{"fields object merged, null dropped",
			`{"task":"ACK","dom":"CS","fields":{"return":"cs","p":3,"tone":null}}`,
			"ACK|CS|return:cs|p:3|aacp:1.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Encode([]byte(tt.request))
			if err != nil {
				t.Fatal(err)
			}
			if got := p.String(); got != tt.want {
				t.Errorf("Encode =\n%s\nwant\n%s", got, tt.want)
			}
			back, diags := Parse(p.String())
			for _, d := range diags {
				t.Errorf("the encoded packet does not parse cleanly: %s", d)
			}
			if back.String() != p.String() {
				t.Errorf("round trip changed the packet: %s", back.String())
			}
		})
	}
}

func TestEncodeErrors(t *testing.T) {
	for _, req := range []string{
		``, `[]`, `null`, `{"task":"FETCH"}`, `{"task":1,"dom":"HR"}`,
		`{"task":"FETCH","dom":"HR","res":"a|b"}`,
		`{"task":"FETCH","dom":"HR","res":"line\nbreak"}`,
		`{"task":"FETCH","dom":"HR","fields":["a,b"]}`,
		`{"task":"FETCH","dom":"HR","terms":{"a":{"b":1}}}`,
		`{"task":"FETCH","dom":"HR","bad key":1}`,
		`{"task":"FETCH","dom":"HR","filter":{"\t":"x"}}`,       // the parser trims white space round a name
		`{"task":"FETCH","dom":"HR","filter":{"a\u00a0b":"x"}}`, // and splits nothing on it, but a name is one word
		`{"task":"FETCH","dom":"HR"} {}`,
		`{"task":"FETCH","dom":"HR","res":"a","fields":{"res":"b"}}`,
	} {
		if p, err := Encode([]byte(req)); err == nil {
			t.Errorf("Encode(%s) = %s, want an error", req, p)
		}
	}
}

// TestEncodeDeterministic encodes the same request with its members in every rotation and
// requires the same bytes.
func TestEncodeDeterministic(t *testing.T) {
	members := []string{`"task":"MERGE"`, `"dom":"HR"`, `"return":"HR-Agent"`, `"p":1`, `"rules":"payroll_v2"`, `"validate":"budget_cc"`, `"aacp":"1.1"`}
	want := "MERGE|HR|return:HR-Agent|p:1|aacp:1.1|rules:payroll_v2|validate:budget_cc"
	for i := range members {
		rot := append(append([]string{}, members[i:]...), members[:i]...)
		p, err := Encode([]byte("{" + strings.Join(rot, ",") + "}"))
		if err != nil {
			t.Fatal(err)
		}
		if p.String() != want {
			t.Errorf("rotation %d: %s", i, p)
		}
	}
}

// TestDecodeGolden checks the English for the study's packets and the specification's
// examples against testdata/*.decode.golden (go test -update rewrites them).
func TestDecodeGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.aacp")
	if len(files) == 0 {
		t.Fatal("no testdata/*.aacp inputs")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			p, _ := Parse(string(src))
			got := Decode(p) + "-- quote --\n" + Quote(p)
			golden := strings.TrimSuffix(f, ".aacp") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("differs from %s (go test -update, then review the diff)\ngot:\n%s", golden, got)
			}
		})
	}
}
