package a2c_test

import (
	"context"
	"fmt"

	"github.com/parleyhq/parley/a2c"
	"github.com/parleyhq/parley/bpe"
	"github.com/parleyhq/parley/trace"
)

func ExampleEncodeSession() {
	args := trace.StringValue(`{"city": "Paris", "days": 3}`)
	s := trace.Session{Records: []trace.Record{
		{Kind: trace.KindToolCall, From: "planner", To: "tool", Tool: "weather", CallID: "c1", Args: &args},
		{Kind: trace.KindToolResult, From: "tool", To: "planner", Tool: "weather", CallID: "c1", Text: "sunny"},
	}}
	enc, err := a2c.EncodeSession("demo", a2c.RecordValues(&s), a2c.Default(nil))
	if err != nil {
		panic(err)
	}
	fmt.Print(enc.Payload())
	// Output:
	// a2c/2 demo
	// c|planner|tool|weather|c1||%p{city:Paris,days:3}
	// r|tool|planner|||sunny
}

func ExampleDecodeSession() {
	id, recs, err := a2c.DecodeSession("a2c/2 demo\nm|user|assistant|||hello\n", nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(id, string(trace.Canonical(&recs[0])))
	// Output:
	// demo {"from":"user","kind":"message","text":"hello","to":"assistant"}
}

func ExampleMeasure() {
	enc, err := bpe.Get("cl100k_base")
	if err != nil {
		panic(err)
	}
	in := a2c.Inputs(trace.Synthetic(1, 5))
	res, err := a2c.Measure(context.Background(), in, a2c.Default(enc), enc, "cl100k_base", nil, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println("lossless:", res.Lossless)
	fmt.Println("full cost = parts:", res.FullCostTokens == res.PayloadTokens+res.InstructionTokens+res.DictionaryTokens)
	fmt.Println("cheaper than canonical JSON:", res.FullCostTokens < res.RawTokens)
	// Output:
	// lossless: true
	// full cost = parts: true
	// cheaper than canonical JSON: true
}

func ExampleDictionary_Check() {
	dict := &a2c.Dictionary{Text: "You are a helpful assistant. Answer briefly and cite your sources."}
	rec, _ := trace.ParseJSON([]byte(`{"kind":"message","from":"system","text":"You are a helpful assistant. Answer briefly and cite your sources."}`))
	opt := a2c.Default(nil)
	opt.Dictionary = dict
	enc, err := a2c.EncodeSession("demo", []trace.Value{rec}, opt)
	if err != nil {
		panic(err)
	}
	fmt.Print(enc.Payload())
	_, _, err = a2c.DecodeSession(enc.Payload(), &a2c.Dictionary{Text: "another dictionary"})
	fmt.Println(err)
	// Output:
	// a2c/2+d492023 demo
	// m|system||||^6679
	// a2c: the payload was encoded with dictionary 492023, not with the one given (449621); pass the dictionary it was encoded with
}
