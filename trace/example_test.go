package trace_test

import (
	"fmt"
	"strings"

	"github.com/parleyhq/parley/trace"
)

func ExampleParseJSON() {
	// Numbers keep their token; object members are sorted only when written canonically.
	v, err := trace.ParseJSON([]byte(`{"b": 1000.0, "a": [-0, 1e400, 12345678901234567890], "c": "\u00e9"}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(string(trace.Canonical(&v)))
	// Output: {"a":[-0,1e400,12345678901234567890],"b":1000.0,"c":"é"}
}

func ExampleRecord_Canonical() {
	args := trace.StringValue(`{"q": "weather"}`)
	r := trace.Record{Kind: trace.KindToolCall, From: "assistant", To: "tool", Tool: "search", CallID: "c1", Args: &args}
	fmt.Println(string(r.Canonical()))
	// Output: {"args":"{\"q\": \"weather\"}","call_id":"c1","from":"assistant","kind":"tool_call","to":"tool","tool":"search"}
}

func ExampleOpenAI() {
	line := `{"id":"t/1","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","name":"f","content":"ok"}]}`
	ss, err := trace.OpenAI("t.jsonl", []byte(line))
	if err != nil {
		panic(err)
	}
	for _, r := range ss[0].Records {
		fmt.Println(string(r.Canonical()))
	}
	// Output:
	// {"from":"user","kind":"message","text":"hi","to":"assistant"}
	// {"args":"{}","call_id":"c1","from":"assistant","kind":"tool_call","meta":{"call":{"type":"function"},"content":null},"to":"tool","tool":"f"}
	// {"call_id":"c1","from":"tool","kind":"tool_result","result":"ok","to":"assistant","tool":"f"}
}

func ExampleReadSessions() {
	in := `{"id":"t1","records":[{"text":"hi","kind":"message"}]}
{"step":1,"note":"any object"}
{"step":2}
`
	ss, err := trace.ReadSessions(strings.NewReader(in))
	if err != nil {
		panic(err)
	}
	for _, s := range ss {
		fmt.Println(s.ID, len(s.Records), string(trace.Canonical(&s.Records[0])))
	}
	// Output:
	// t1 1 {"kind":"message","text":"hi"}
	// stdin 2 {"note":"any object","step":1}
}
