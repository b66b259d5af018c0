package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/evidence"
)

const runDescription = `
Post a test-run record to a room, as a runner seat. Messages then cite it as evidence
('ev#1 run ci-42'), and the server checks the citation against the record: a done about
tests is proven by a run, not by a commit.

Give the counts with --passed and --failed, or a report FILE: 'go test -json' output or JUnit
XML (- for stdin). --id names the run (required unless a JSON report carries an id);
--commit records the commit the run tested.`

const runExamples = `  parley run post team --id ci-42 --commit 3f9a2c1 --passed 12 --failed 0
  go test -json ./... | parley run post team --id ci-43 -
  parley run post team --id nightly-7 junit.xml`

func runRun(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "run", "run post ROOM [--id ID] [--commit SHA] [--passed N --failed N | FILE]", runDescription, runExamples)
	cf := addClientFlags(fs)
	id := fs.String("id", "", "the run's id, e.g. ci-42")
	commit := fs.String("commit", "", "the commit `SHA` the run tested")
	passed, failed := &countFlag{}, &countFlag{}
	fs.Var(passed, "passed", "`N` tests passed; when absent, the counts are read from the report FILE")
	fs.Var(failed, "failed", "`N` tests failed; when absent, the counts are read from the report FILE")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 || pos[0] != "post" {
		return usageErrorf("missing subcommand: post")
	}
	pos = pos[1:]
	counts := passed.set || failed.set
	switch {
	case len(pos) == 0:
		return usageErrorf("missing ROOM")
	case len(pos) > 2:
		return usageErrorf("want ROOM and an optional FILE, got %d arguments", len(pos))
	case counts && len(pos) == 2:
		return usageErrorf("give either --passed/--failed or a report FILE, not both")
	case !counts && len(pos) == 1:
		return usageErrorf("give --passed N --failed N, or a report FILE ('go test -json' output or JUnit XML)")
	case counts && (!passed.set || !failed.set):
		return usageErrorf("give both --passed and --failed")
	}
	room := pos[0]

	var body []byte
	contentType := "application/json"
	reportID := "" // the run's id, sent beside a report (a JSON record carries its own)
	if counts {
		if *id == "" {
			return usageErrorf("--id is required with --passed/--failed")
		}
		body, _ = json.Marshal(map[string]any{"id": *id, "commit": *commit, "passed": passed.n, "failed": failed.n})
	} else {
		report, _, err := readPostInput(e, pos[1])
		if err != nil {
			return &exitError{code: 1, msg: err.Error()}
		}
		contentType = reportType(report)
		if *commit != "" {
			// The server takes a commit only in the JSON shape, so count the report here,
			// with the server's own parser, and send the counts.
			run, err := evidence.ParseRun(contentType, report, *id)
			if err != nil {
				return &exitError{code: 1, msg: parley.ErrorMessage(err)}
			}
			body, _ = json.Marshal(map[string]any{"id": run.ID, "commit": *commit, "passed": run.Passed, "failed": run.Failed})
			contentType = "application/json"
		} else {
			body = report
			reportID = *id
		}
	}
	c, err := cf.client(e, false)
	if err != nil {
		return err
	}
	run, err := c.PostRun(ctx, nil, room, contentType, body, reportID)
	if err != nil {
		return c.fail(err)
	}
	fmt.Fprintf(e.stdout, "run %s: %d passed, %d failed", run.ID, run.Passed, run.Failed)
	if run.Commit != "" {
		fmt.Fprintf(e.stdout, " at commit %s", run.Commit)
	}
	fmt.Fprintf(e.stdout, "\ncite it as evidence: ev run %s\n", run.ID)
	return nil
}

// reportType tells JUnit XML from `go test -json` output from a JSON record.
func reportType(b []byte) string {
	t := bytes.TrimSpace(b)
	switch {
	case len(t) > 0 && t[0] == '<':
		return "application/xml"
	case json.Valid(t) && !bytes.Contains(t, []byte(`"Action"`)):
		return "application/json"
	}
	return "application/x-ndjson"
}

// countFlag is a count of tests that may be absent. Its unset value prints as "", so
// --help shows no default for it (an int flag would show its -1 sentinel).
type countFlag struct {
	n   int
	set bool
}

func (c *countFlag) String() string {
	if c == nil || !c.set {
		return ""
	}
	return strconv.Itoa(c.n)
}

func (c *countFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	switch {
	case err != nil:
		return errors.New("parse error")
	case n < 0:
		return errors.New("a count cannot be negative")
	}
	c.n, c.set = n, true
	return nil
}
