package evidence

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"

	"github.com/parleyhq/parley"
)

// ParseRun reads a test-run report in one of three shapes and returns the run it describes
// (Room, Seat and Time are left for the caller):
//
//   - JSON: {"id":"ci-42","commit":"3f9a2c1","passed":12,"failed":0}
//   - `go test -json` output: one event per line; every pass or fail event of a test (an
//     event with a Test field, subtests included) counts once
//   - JUnit XML: <testsuite tests= failures= errors= skipped=> or <testsuites> of them
//
// contentType picks the shape when it names one (application/json, application/x-ndjson,
// application/xml, text/xml); otherwise the body's first byte does. id, when not "", names the
// run; it must agree with an id in a JSON body. Errors are EINVALID and say what is wrong.
func ParseRun(contentType string, body []byte, id string) (*parley.Run, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return nil, parley.Errorf(parley.EINVALID, "the run report is empty").
			WithHint("send JSON {\"id\",\"commit\",\"passed\",\"failed\"}, `go test -json` output or JUnit XML")
	}
	ct := strings.ToLower(contentType)
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = strings.TrimSpace(ct)

	var run *parley.Run
	var err error
	switch {
	case strings.HasSuffix(ct, "xml") || (ct != "application/json" && trimmed[0] == '<'):
		run, err = parseJUnit(trimmed)
	case ct == "application/x-ndjson" || ct == "application/jsonl" || isGoTestJSON(trimmed):
		run, err = parseGoTest(trimmed)
	default:
		run, err = parseRunJSON(trimmed)
	}
	if err != nil {
		return nil, err
	}
	switch {
	case id != "" && run.ID != "" && id != run.ID:
		return nil, parley.Errorf(parley.EINVALID, "the report's id %q differs from the id %q in the request", run.ID, id).
			WithHint("send one id, or make them agree")
	case id != "":
		run.ID = id
	}
	if run.ID == "" {
		return nil, parley.Errorf(parley.EINVALID, "the run has no id").
			WithHint("pass id=<run id> with the report, or put \"id\" in the JSON body")
	}
	if !ValidRunID(run.ID) {
		return nil, parley.Errorf(parley.EINVALID, "run id %q is not a plain id", shorten(run.ID, 70)).
			WithHint("use letters, digits and . _ : / - (at most 128), e.g. ci-1287")
	}
	if run.Commit != "" {
		run.Commit = strings.ToLower(run.Commit)
		if !ValidSHA(run.Commit) {
			return nil, parley.Errorf(parley.EINVALID, "commit %q is not a hex sha", shorten(run.Commit, 70)).
				WithHint("give the commit the run tested as 4 to 64 hex digits, or leave it out")
		}
	}
	if run.Passed < 0 || run.Failed < 0 {
		return nil, parley.Errorf(parley.EINVALID, "passed and failed must not be negative")
	}
	return run, nil
}

// isGoTestJSON reports whether the body's first line is a `go test -json` event.
func isGoTestJSON(b []byte) bool {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	var ev struct {
		Action *string
	}
	return json.Unmarshal(line, &ev) == nil && ev.Action != nil
}

func parseRunJSON(b []byte) (*parley.Run, error) {
	var v struct {
		ID     string `json:"id"`
		Commit string `json:"commit"`
		Passed *int   `json:"passed"`
		Failed *int   `json:"failed"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return nil, parley.Errorf(parley.EINVALID, "the run report is not valid JSON: %v", err).
			WithHint(`send {"id":"ci-42","commit":"3f9a2c1","passed":12,"failed":0}`)
	}
	if v.Passed == nil || v.Failed == nil {
		return nil, parley.Errorf(parley.EINVALID, "the run report lacks passed or failed").
			WithHint("both counts are required, 0 included")
	}
	return &parley.Run{ID: v.ID, Commit: v.Commit, Passed: *v.Passed, Failed: *v.Failed}, nil
}

func parseGoTest(b []byte) (*parley.Run, error) {
	run := &parley.Run{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var ev struct {
			Action string
			Test   string
		}
		if err := json.Unmarshal(line, &ev); err != nil {
			return nil, parley.Errorf(parley.EINVALID, "go test -json output, line %d: not a JSON event", n).
				WithHint("send the output of `go test -json` unchanged")
		}
		if ev.Test == "" {
			continue // package-level events summarise the tests already counted
		}
		switch ev.Action {
		case "pass":
			run.Passed++
		case "fail":
			run.Failed++
		}
	}
	if err := sc.Err(); err != nil {
		return nil, parley.Errorf(parley.EINVALID, "go test -json output: %v", err)
	}
	return run, nil
}

type junitSuite struct {
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

func parseJUnit(b []byte) (*parley.Run, error) {
	var root struct {
		XMLName xml.Name
		junitSuite
	}
	if err := xml.Unmarshal(b, &root); err != nil {
		return nil, parley.Errorf(parley.EINVALID, "the run report is not valid XML: %v", err).
			WithHint("send JUnit XML: <testsuite tests=… failures=… errors=…>")
	}
	var tests, failed, skipped int
	var sum func(s junitSuite)
	sum = func(s junitSuite) {
		if len(s.Suites) > 0 {
			for _, c := range s.Suites {
				sum(c)
			}
			return
		}
		tests += s.Tests
		failed += s.Failures + s.Errors
		skipped += s.Skipped
	}
	switch root.XMLName.Local {
	case "testsuites", "testsuite":
		sum(root.junitSuite)
	default:
		return nil, parley.Errorf(parley.EINVALID, "the XML root is <%s>, not <testsuites> or <testsuite>", root.XMLName.Local).
			WithHint("send JUnit XML")
	}
	passed := tests - failed - skipped
	if passed < 0 {
		return nil, parley.Errorf(parley.EINVALID,
			"the JUnit counts do not add up: %d tests, %d failures and errors, %d skipped", tests, failed, skipped)
	}
	return &parley.Run{Passed: passed, Failed: failed}, nil
}
