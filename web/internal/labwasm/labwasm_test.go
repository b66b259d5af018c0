package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// record reads web/lab/lab.wasm.inputs and splits it into the inputs part and the outputs.
func record(t *testing.T, root string) (inputs, outputs string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, outInputs))
	if err != nil {
		t.Fatalf("%v: run go generate ./web", err)
	}
	s := string(b)
	i := strings.Index(s, "\noutput ")
	if i < 0 {
		t.Fatalf("%s has no output lines: run go generate ./web", outInputs)
	}
	return s[:i+1], s[i+1:]
}

// diffLines lists the lines of a that b lacks and the other way round.
func diffLines(a, b string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	ma, mb := in(a), in(b)
	var out []string
	for _, l := range strings.Split(a, "\n") {
		if !mb[l] {
			out = append(out, "  recorded: "+l)
		}
	}
	for _, l := range strings.Split(b, "\n") {
		if !ma[l] {
			out = append(out, "  now:      "+l)
		}
	}
	return strings.Join(out, "\n")
}

// TestFresh fails when web/lab/lab.wasm.gz was not built from the repository as it is: a
// Go file of a package the lab imports changed (or one was added or removed), or the
// committed wasm or wasm_exec.js is not the one recorded. A different Go version only logs:
// the sources are what this test guards; TestRebuild compares bytes when the versions match.
func TestFresh(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	recIn, recOut := record(t, root)
	now, err := Inputs(root)
	if err != nil {
		t.Fatal(err)
	}
	version := func(s string) string { l, _, _ := strings.Cut(strings.SplitN(s, "\n", 3)[1], "\n"); return l }
	if version(recIn) != version(now) {
		t.Logf("lab.wasm.gz was built with %q, this toolchain is %q", version(recIn), version(now))
		recIn = strings.Replace(recIn, version(recIn), version(now), 1)
	}
	if recIn != now {
		t.Errorf("web/lab/lab.wasm.gz is stale: its sources changed since it was built. Run go generate ./web and commit web/lab.\n%s", diffLines(recIn, now))
	}
	gz, err := os.ReadFile(filepath.Join(root, outWasm))
	if err != nil {
		t.Fatal(err)
	}
	execJS, err := os.ReadFile(filepath.Join(root, outExec))
	if err != nil {
		t.Fatal(err)
	}
	if got := Outputs(gz, execJS); got != recOut {
		t.Errorf("web/lab's wasm or wasm_exec.js is not the one go generate recorded. Run go generate ./web.\n%s", diffLines(recOut, got))
	}
}

// TestRebuild builds the lab again and checks that the committed lab.wasm.gz holds exactly
// those bytes and wasm_exec.js is the toolchain's, when this toolchain is the one that made
// them (the build is reproducible: -trimpath, no VCS stamp). It takes a wasm build, so
// -short skips it.
func TestRebuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the wasm: skipped in -short mode")
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	recIn, _ := record(t, root)
	now, err := Inputs(root)
	if err != nil {
		t.Fatal(err)
	}
	if strings.SplitN(recIn, "\n", 3)[1] != strings.SplitN(now, "\n", 3)[1] {
		t.Skipf("lab.wasm.gz was made by another Go version (%s): its bytes cannot be compared", strings.SplitN(recIn, "\n", 3)[1])
	}
	wasm, err := build(root)
	if err != nil {
		t.Fatal(err)
	}
	gz, err := os.ReadFile(filepath.Join(root, outWasm))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	committed, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(committed, wasm) {
		t.Errorf("web/lab/lab.wasm.gz (%d bytes inflated) is not what the sources build (%d bytes): run go generate ./web", len(committed), len(wasm))
	}
	want, err := wasmExec(root)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(root, outExec)); !bytes.Equal(got, want) {
		t.Error("web/lab/wasm_exec.js is not this toolchain's: run go generate ./web")
	}
}
