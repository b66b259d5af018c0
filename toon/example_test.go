package toon_test

import (
	"fmt"

	"github.com/parleyhq/parley/toon"
)

func ExampleFromJSON() {
	out, err := toon.FromJSON([]byte(`{
  "job_id": "limiter",
  "deadline": "2026-09-19T12:00:00Z",
  "headers": ["Retry-After"],
  "blockers": [{"what": "no Redis mock", "needs": "UPSTASH_REDIS_REST_URL"}],
  "cost": {"tokens": 61000, "confidence": 0.70}
}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(out)
	// Output:
	// job_id: limiter
	// deadline: "2026-09-19T12:00:00Z"
	// headers[1]: Retry-After
	// blockers[1]{what,needs}:
	//   no Redis mock,UPSTASH_REDIS_REST_URL
	// cost:
	//   tokens: 61000
	//   confidence: 0.7
}

func ExampleEncode() {
	// Object keeps the field order; a Go map would come out sorted.
	v := toon.Object{
		{Key: "to", Value: "yu"},
		{Key: "options", Value: []any{"A", "B"}},
		{Key: "approved", Value: false},
	}
	out, _ := toon.Encode(v)
	fmt.Println(out)
	// Output:
	// to: yu
	// options[2]: A,B
	// approved: false
}

func ExampleEncodeOptions() {
	v, _ := toon.ParseJSON([]byte(`{"opts":[{"id":"A","cost":"$0, exact"},{"id":"B","cost":"0 hops"}]}`))
	// With the pipe delimiter a comma inside a value needs no quotes.
	out, _ := toon.EncodeOptions(v, toon.Options{Delimiter: toon.Pipe})
	fmt.Println(out)
	// Output:
	// opts[2|]{id|cost}:
	//   A|$0, exact
	//   B|0 hops
}
