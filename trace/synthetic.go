package trace

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Synthetic generates n sessions of planner → builder → reviewer handoffs, the same for
// the same seed on every machine (math/rand/v2 PCG). Each session has a plan with
// numbered steps, tool calls with JSON arguments (as strings, the way chat APIs carry
// them), tool results (JSON text, sometimes an error), messages and reviews that quote
// earlier results verbatim, an artifact (a diff), status lines and a final answer. It is
// a stand-in for private traffic, not a benchmark of any real system.
func Synthetic(seed int64, n int) []Session {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
	out := make([]Session, n)
	for i := range out {
		out[i] = synthSession(rng, fmt.Sprintf("synthetic/%d/%04d", seed, i))
	}
	return out
}

var (
	synthAreas   = []string{"billing", "search", "auth", "ingest", "export", "scheduler", "notifications", "reports"}
	synthVerbs   = []string{"add retries to", "paginate", "cache", "rate-limit", "validate input for", "log failures in", "speed up", "split"}
	synthFiles   = []string{"handler.go", "store.go", "client.go", "worker.go", "config.go", "api.go", "model.go"}
	synthTools   = []string{"search_code", "read_file", "run_tests", "http_get", "sql_query"}
	synthPeople  = []string{"planner", "builder", "reviewer"}
	synthReasons = []string{"the timeout is too short", "an error is swallowed", "the loop never ends on an empty page", "the cache key ignores the tenant", "a nil map is written to"}
)

func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

func synthSession(rng *rand.Rand, id string) Session {
	area, verb := pick(rng, synthAreas), pick(rng, synthVerbs)
	task := fmt.Sprintf("T-%d", 1000+rng.IntN(9000))
	s := Session{ID: id}
	add := func(r Record) { s.Records = append(s.Records, r) }
	steps := 2 + rng.IntN(4)
	var plan strings.Builder
	fmt.Fprintf(&plan, "Goal: %s the %s service (%s).\n", verb, area, task)
	for i := 1; i <= steps; i++ {
		fmt.Fprintf(&plan, "%d. %s %s/%s and check that %s.\n", i, pick(rng, []string{"Inspect", "Change", "Test", "Document"}), area, pick(rng, synthFiles), pick(rng, synthReasons))
	}
	add(Record{Kind: KindPlan, From: "planner", To: "builder", Text: plan.String(),
		Meta: obj("task", StringValue(task), "budget_tokens", NumberValue(fmt.Sprint(2000*(1+rng.IntN(8)))), "priority", NumberValue(fmt.Sprint(1+rng.IntN(3))))})
	var results []string
	calls := 3 + rng.IntN(8)
	for c := 0; c < calls; c++ {
		tool := pick(rng, synthTools)
		callID := fmt.Sprintf("call_%08x", rng.Uint32())
		file := area + "/" + pick(rng, synthFiles)
		var args string
		switch tool {
		case "search_code":
			args = fmt.Sprintf(`{"query": "%s", "path": "%s", "max_results": %d}`, pick(rng, []string{"retry", "timeout", "cache", "page", "limit"}), area, 5+rng.IntN(20))
		case "read_file":
			args = fmt.Sprintf(`{"path": "%s", "start_line": %d, "end_line": %d}`, file, 1+rng.IntN(50), 60+rng.IntN(200))
		case "run_tests":
			args = fmt.Sprintf(`{"package": "./%s/...", "run": "Test%s", "timeout_s": %d}`, area, strings.ToUpper(area[:1])+area[1:], 30*(1+rng.IntN(4)))
		case "http_get":
			args = fmt.Sprintf(`{"url": "https://%s.internal/api/v1/status?verbose=true", "headers": {"Accept": "application/json"}}`, area)
		default:
			args = fmt.Sprintf(`{"sql": "SELECT id, state, updated_at FROM %s_jobs WHERE state = 'failed' LIMIT %d"}`, area, 5+rng.IntN(20))
		}
		a := StringValue(args)
		add(Record{Kind: KindToolCall, From: "builder", To: "tool", Tool: tool, CallID: callID, Args: &a})
		if rng.IntN(9) == 0 {
			add(Record{Kind: KindError, From: "tool", To: "builder", Tool: tool, CallID: callID,
				Text: fmt.Sprintf("%s: deadline exceeded after %d.%03ds", tool, rng.IntN(30), rng.IntN(1000))})
			continue
		}
		var res strings.Builder
		res.WriteString(`{"ok": true, "items": [`)
		for k, m := 0, 1+rng.IntN(5); k < m; k++ {
			if k > 0 {
				res.WriteString(", ")
			}
			fmt.Fprintf(&res, `{"id": %d, "file": "%s", "line": %d, "state": "%s", "note": "%s"}`,
				rng.IntN(100000), file, 1+rng.IntN(400), pick(rng, []string{"failed", "ok", "pending"}), pick(rng, synthReasons))
		}
		fmt.Fprintf(&res, `], "elapsed_ms": %d.%d}`, rng.IntN(900), rng.IntN(10))
		r := StringValue(res.String())
		results = append(results, res.String())
		add(Record{Kind: KindToolResult, From: "tool", To: "builder", Tool: tool, CallID: callID, Result: &r})
		if rng.IntN(3) == 0 && len(results) > 0 {
			q := pick(rng, results)
			add(Record{Kind: KindMessage, From: "builder", To: "planner",
				Text: fmt.Sprintf("Step %d: the tool returned %s, so %s. Next I change %s.", c+1, q, pick(rng, synthReasons), file)})
		}
		if rng.IntN(4) == 0 {
			add(Record{Kind: KindStatus, From: "builder", To: "planner", Text: fmt.Sprintf("%d/%d steps done", 1+rng.IntN(steps), steps),
				Meta: obj("task", StringValue(task), "state", StringValue("in_progress"))})
		}
	}
	diff := fmt.Sprintf("--- a/%s/%s\n+++ b/%s/%s\n@@ -%d,3 +%d,4 @@\n-\treturn err\n+\tif err != nil {\n+\t\treturn fmt.Errorf(\"%s: %%w\", err)\n+\t}\n", area, synthFiles[0], area, synthFiles[0], 10+rng.IntN(90), 10+rng.IntN(90), area)
	add(Record{Kind: KindArtifact, From: "builder", To: "reviewer", Text: diff, Meta: obj("task", StringValue(task), "type", StringValue("diff"))})
	verdict := pick(rng, []string{"approve", "request_changes"})
	review := fmt.Sprintf("Verdict: %s. The change wraps the error as the plan asked. ", verdict)
	if len(results) > 0 {
		review += "Evidence: " + pick(rng, results)
	}
	add(Record{Kind: KindReview, From: "reviewer", To: "builder", Text: review, Meta: obj("task", StringValue(task), "verdict", StringValue(verdict))})
	add(Record{Kind: KindFinal, From: pick(rng, synthPeople[:2]), To: "planner", Text: fmt.Sprintf("Done: %s the %s service (%s). Review: %s.", verb, area, task, verdict)})
	return s
}

// obj builds an object from alternating keys and values.
func obj(kv ...any) *Value {
	v := Value{Kind: Object}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Members = append(v.Members, Member{Key: kv[i].(string), Value: kv[i+1].(Value)})
	}
	return &v
}
