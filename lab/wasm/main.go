//go:build js && wasm

// Command wasm is the format lab's WebAssembly: package lab for the /lab page. Build it
// with go generate in web/lab (GOOS=js GOARCH=wasm, tag parley_novocab: the tokenizer
// vocabularies are not carried but fetched from the server that serves the page, which
// embeds them already).
//
// It sets globalThis.parleyLab to an object of three functions, each returning a JSON
// string, {"error": "..."} on failure:
//
//	supply(name, bytes)           hand over a vocabulary (a Uint8Array of /lab/vocab/<name>)
//	analyze(text, adapter, name)  lab.Analyze: adapter auto, openai, toolbench, swe-agent or records
//	lint(text)                    lab.LintMessage: the format and the diagnostics of parley lint
//
// and then calls globalThis.parleyLabReady() when the page defined it.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"syscall/js"

	"github.com/parleyhq/parley/bpe"
	"github.com/parleyhq/parley/lab"
)

func main() {
	api := js.Global().Get("Object").New()
	api.Set("supply", js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) != 2 || args[1].Type() != js.TypeObject {
			return fail(fmt.Errorf("supply(name, Uint8Array)"))
		}
		b := make([]byte, args[1].Get("length").Int())
		js.CopyBytesToGo(b, args[1])
		if err := bpe.Supply(args[0].String(), string(b)); err != nil {
			return fail(err)
		}
		return reply(map[string]any{"encoding": args[0].String(), "bytes": len(b)})
	}))
	api.Set("analyze", js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) != 3 {
			return fail(fmt.Errorf("analyze(text, adapter, name)"))
		}
		an, err := lab.Analyze(context.Background(), args[0].String(), args[1].String(), args[2].String())
		if err != nil {
			return fail(err)
		}
		return reply(an)
	}))
	api.Set("lint", js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) != 1 {
			return fail(fmt.Errorf("lint(text)"))
		}
		l, err := lab.LintMessage(args[0].String())
		if err != nil {
			return fail(err)
		}
		return reply(l)
	}))
	js.Global().Set("parleyLab", api)
	if ready := js.Global().Get("parleyLabReady"); ready.Type() == js.TypeFunction {
		ready.Invoke()
	}
	select {}
}

func reply(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return fail(err)
	}
	return string(b)
}

func fail(err error) any {
	b, _ := json.Marshal(map[string]string{"error": err.Error()})
	return string(b)
}
