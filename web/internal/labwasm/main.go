// Command labwasm builds the format lab's WebAssembly into web/lab, where package web
// embeds it. Run it with go generate in web (see web/lab.go), from anywhere in the
// repository:
//
//	go generate ./web
//
// It writes three files:
//
//	web/lab/lab.wasm.gz      lab/wasm built with GOOS=js GOARCH=wasm, -trimpath, -ldflags=-s -w
//	                         and the tag parley_novocab (no vocabularies: the page fetches the
//	                         server's own), gzipped; the server sends it as is to clients that
//	                         take gzip and inflates it for the others
//	web/lab/wasm_exec.js     the toolchain's JavaScript support file for that wasm
//	web/lab/lab.wasm.inputs  the Go version, the SHA-256 of every repository file the build
//	                         read and of the two files above, so that a test can tell a
//	                         stale or altered lab.wasm.gz (TestFresh)
//
// The flags make the build reproducible: the same sources and toolchain give the same bytes,
// which TestRebuild checks.
package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// pkg is the lab's main package, relative to the module root.
const pkg = "./lab/wasm"

// buildTags and ldflags are the build's settings; they are part of the recorded inputs.
const (
	buildTags = "parley_novocab"
	ldflags   = "-s -w"
)

// Output files, relative to the module root.
const (
	outWasm   = "web/lab/lab.wasm.gz"
	outExec   = "web/lab/wasm_exec.js"
	outInputs = "web/lab/lab.wasm.inputs"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "labwasm:", err)
		os.Exit(1)
	}
}

func run() error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	wasm, err := build(root)
	if err != nil {
		return err
	}
	gz, err := compress(wasm)
	if err != nil {
		return err
	}
	execJS, err := wasmExec(root)
	if err != nil {
		return err
	}
	inputs, err := Inputs(root)
	if err != nil {
		return err
	}
	record := inputs + Outputs(gz, execJS)
	for name, b := range map[string][]byte{outWasm: gz, outExec: execJS, outInputs: []byte(record)} {
		if err := os.WriteFile(filepath.Join(root, name), b, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("labwasm: %s %d bytes (%d raw)\n", outWasm, len(gz), len(wasm))
	return nil
}

// moduleRoot is the folder of the go.mod that holds the current directory.
func moduleRoot() (string, error) {
	out, err := goCmd("", nil, "env", "GOMOD")
	if err != nil {
		return "", err
	}
	mod := strings.TrimSpace(out)
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside the parley module: run go generate ./web from the repository")
	}
	return filepath.Dir(mod), nil
}

var wasmEnv = []string{"GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0"}

// build compiles the lab's wasm and returns its bytes.
func build(root string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "labwasm")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "lab.wasm")
	if _, err := goCmd(root, wasmEnv, "build", "-tags", buildTags, "-trimpath", "-buildvcs=false", "-ldflags="+ldflags, "-o", out, pkg); err != nil {
		return nil, err
	}
	return os.ReadFile(out)
}

// compress gzips b at the best level, with no name and no time in the header, so that the
// same wasm always gives the same file.
func compress(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// wasmExec reads the toolchain's wasm_exec.js: lib/wasm since Go 1.24, misc/wasm before.
func wasmExec(root string) ([]byte, error) {
	goroot, err := goCmd(root, nil, "env", "GOROOT")
	if err != nil {
		return nil, err
	}
	goroot = strings.TrimSpace(goroot)
	var firstErr error
	for _, p := range []string{"lib/wasm/wasm_exec.js", "misc/wasm/wasm_exec.js"} {
		b, err := os.ReadFile(filepath.Join(goroot, p))
		if err == nil {
			return b, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, fmt.Errorf("wasm_exec.js not found in GOROOT %s: %w", goroot, firstErr)
}

// Inputs describes what the wasm is built from: the Go version, the build settings, and the
// SHA-256 of every file of the module that the build reads (each Go and embedded file of
// every package of the module it imports), one per line, sorted; of go.mod its module path
// and go and toolchain lines; the standard library is named by the Go version and any other
// module by its version.
func Inputs(root string) (string, error) {
	version, err := goCmd(root, nil, "env", "GOVERSION")
	if err != nil {
		return "", err
	}
	out, err := goCmd(root, wasmEnv, "list", "-deps", "-json", "-tags", buildTags, pkg)
	if err != nil {
		return "", err
	}
	// Of go.mod, only what the build of module-only packages reads: the module path and the
	// go and toolchain lines (requirements show as the "module" lines below, if any).
	modJSON, err := goCmd(root, nil, "mod", "edit", "-json")
	if err != nil {
		return "", err
	}
	var gomod struct {
		Module    struct{ Path string }
		Go        string
		Toolchain string
	}
	if err := json.Unmarshal([]byte(modJSON), &gomod); err != nil {
		return "", err
	}
	var files, modules []string
	dec := json.NewDecoder(strings.NewReader(out))
	for {
		var p struct {
			Dir                             string
			Standard                        bool
			GoFiles, EmbedFiles, OtherFiles []string
			Module                          *struct {
				Path, Version string
				Main          bool
			}
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return "", err
		}
		if p.Standard {
			continue
		}
		if p.Module != nil && !p.Module.Main {
			// A dependency is named by its version (go.sum pins its bytes).
			modules = append(modules, p.Module.Path+"@"+p.Module.Version)
			continue
		}
		rel, err := filepath.Rel(root, p.Dir)
		if err != nil || strings.HasPrefix(rel, "..") {
			return "", fmt.Errorf("package outside the module in the lab's build: %s", p.Dir)
		}
		for _, group := range [][]string{p.GoFiles, p.EmbedFiles, p.OtherFiles} {
			for _, f := range group {
				files = append(files, filepath.ToSlash(filepath.Join(rel, f)))
			}
		}
	}
	sort.Strings(files)
	modules = slices.Compact(slices.Sorted(slices.Values(modules)))
	var b strings.Builder
	fmt.Fprintf(&b, "# The inputs of web/lab/lab.wasm.gz (go generate ./web writes this file).\n")
	fmt.Fprintf(&b, "go %s\n", strings.TrimSpace(version))
	fmt.Fprintf(&b, "build GOOS=js GOARCH=wasm -tags %s -trimpath -ldflags=%q %s\n", buildTags, ldflags, pkg)
	fmt.Fprintf(&b, "go.mod module %s go %s toolchain %q\n", gomod.Module.Path, gomod.Go, gomod.Toolchain)
	for _, m := range modules {
		fmt.Fprintf(&b, "module %s\n", m)
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return "", err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&b, "%s %s\n", hex.EncodeToString(sum[:]), f)
	}
	return b.String(), nil
}

// Outputs is the record's last lines: the SHA-256 of the two files made from the inputs.
func Outputs(gz, execJS []byte) string {
	a, b := sha256.Sum256(gz), sha256.Sum256(execJS)
	return fmt.Sprintf("output %s %s\noutput %s %s\n", hex.EncodeToString(a[:]), outWasm, hex.EncodeToString(b[:]), outExec)
}

// goCmd runs the go command in dir with env added and returns its standard output.
func goCmd(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}
