package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/parleyhq/parley/internal/sharedtest"
)

// runParley runs dispatch in-process with the given standard input.
func runParley(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	code = dispatch(context.Background(), e, args)
	return code, out.String(), errb.String()
}

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTokensStdin(t *testing.T) {
	code, out, errs := runParley(t, "hello world", "tokens")
	if code != 0 || out != "2\n" {
		t.Fatalf("code %d, stdout %q, stderr %q; want 0, \"2\\n\"", code, out, errs)
	}
	// "-" is standard input too; --ids prints the ids after the count.
	code, out, _ = runParley(t, "hello world", "tokens", "--ids", "-")
	if code != 0 || out != "2\n24912 2375\n" {
		t.Fatalf("--ids: code %d, stdout %q", code, out)
	}
	code, out, _ = runParley(t, "hello world", "tokens", "--encoding", "cl100k_base", "--ids")
	if code != 0 || out != "2\n15339 1917\n" {
		t.Fatalf("cl100k_base --ids: code %d, stdout %q", code, out)
	}
	// Special-token text is ordinary text.
	code, out, _ = runParley(t, "<|endoftext|>", "tokens", "--ids")
	if code != 0 || out != "7\n27 91 419 1440 919 91 29\n" {
		t.Fatalf("special text: code %d, stdout %q", code, out)
	}
}

func TestTokensFiles(t *testing.T) {
	a := writeTemp(t, "a.txt", "hello world")
	b := writeTemp(t, "b.txt", "The quick brown fox jumps over the lazy dog.")
	code, out, errs := runParley(t, "", "tokens", a, b)
	want := "2\t" + a + "\n10\t" + b + "\n12\ttotal\n"
	if code != 0 || out != want {
		t.Fatalf("code %d, stdout %q, stderr %q; want %q", code, out, errs, want)
	}
	// Flags may follow the files.
	code, out, _ = runParley(t, "", "tokens", b, "--encoding=cl100k_base")
	if code != 0 || out != "10\n" {
		t.Fatalf("code %d, stdout %q", code, out)
	}
}

func TestTokensJSON(t *testing.T) {
	a := writeTemp(t, "a.txt", "hello world")
	code, out, errs := runParley(t, "it's", "tokens", "--json", "--ids", a, "-")
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errs)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v in %q", err, out)
	}
	want := []map[string]any{
		{"file": a, "encoding": "o200k_base", "bytes": 11.0, "tokens": 2.0, "ids": []any{24912.0, 2375.0}},
		{"file": "-", "encoding": "o200k_base", "bytes": 4.0, "tokens": 1.0, "ids": []any{64190.0}},
	}
	if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
		t.Fatalf("got %s\nwant %s", g, w)
	}
	// Without --ids there is no "ids" key; with one input it is still an array.
	_, out, _ = runParley(t, "", "tokens", "--json", "--encoding", "cl100k_base", a)
	got = nil
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != 1 {
		t.Fatalf("%v in %q", err, out)
	}
	if _, ok := got[0]["ids"]; ok || got[0]["tokens"] != 2.0 || got[0]["encoding"] != "cl100k_base" {
		t.Fatalf("got %v", got[0])
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTokensErrors(t *testing.T) {
	code, _, errs := runParley(t, "", "tokens", "--encoding", "p50k_base")
	if code != 2 || !strings.Contains(errs, "o200k_base") || !strings.Contains(errs, "cl100k_base") {
		t.Fatalf("unknown encoding: code %d, stderr %q; want 2 and both encodings listed", code, errs)
	}
	missing := filepath.Join(t.TempDir(), "missing.txt")
	code, out, errs := runParley(t, "", "tokens", missing)
	if code != 1 || out != "" || !strings.Contains(errs, missing) {
		t.Fatalf("unreadable file: code %d, stdout %q, stderr %q; want 1 naming the file", code, out, errs)
	}
	code, _, _ = runParley(t, "", "tokens", "--bogus")
	if code != 2 {
		t.Fatalf("unknown flag: code %d, want 2", code)
	}
	code, out, _ = runParley(t, "", "tokens", "--help")
	if code != 0 || !strings.Contains(out, "Usage: parley tokens") {
		t.Fatalf("--help: code %d, stdout %q", code, out)
	}
}

// TestTokensStudy checks the counts of the study's convention texts (o200k_base), when the
// shared folder is beside the clone.
func TestTokensStudy(t *testing.T) {
	for file, want := range map[string]float64{"p2/convention.txt": 127, "p3/convention.txt": 147} {
		p := filepath.Join("..", "..", "..", "shared", "study", file)
		if _, err := os.Stat(p); err != nil {
			sharedtest.Absent(t, "shared study texts absent: %v", err)
		}
		code, out, errs := runParley(t, "", "tokens", "--json", p)
		var got []map[string]any
		if code != 0 || json.Unmarshal([]byte(out), &got) != nil || len(got) != 1 || got[0]["tokens"] != want {
			t.Errorf("%s: code %d, stdout %q, stderr %q; want %v tokens", file, code, out, errs, want)
		}
	}
}

// TestTokensStreams counts a 5 MB file, which `parley tokens` reads in parts, and compares
// with --ids, which encodes it whole: runs of spaces and multi-byte characters straddle the
// megabyte reads, and the JSON reports every byte.
func TestTokensStreams(t *testing.T) {
	var sb strings.Builder
	for i := 0; sb.Len() < 5<<20; i++ {
		sb.WriteString("The quick brown fox, née Ünïcödé 中文 😀, jumps.\n")
		if i%997 == 0 {
			sb.WriteString(strings.Repeat(" ", 300000+i))
			sb.WriteString(strings.Repeat("é", 1000))
		}
	}
	text := sb.String()
	p := writeTemp(t, "big.txt", text)
	for _, enc := range []string{"o200k_base", "cl100k_base"} {
		code, whole, errs := runParley(t, "", "tokens", "--encoding", enc, "--ids", p)
		if code != 0 {
			t.Fatalf("--ids: code %d, stderr %q", code, errs)
		}
		want := whole[:strings.IndexByte(whole, '\n')]
		code, out, errs := runParley(t, "", "tokens", "--encoding", enc, "--json", p)
		var res []tokensResult
		if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res) != 1 {
			t.Fatalf("--json: code %d, stdout %q, stderr %q", code, out, errs)
		}
		if got := strings.TrimSpace(out); res[0].Bytes != len(text) || want != itoa(res[0].Tokens) {
			t.Fatalf("%s: streamed count %d tokens of %d bytes, whole %s tokens of %d bytes (%s)", enc, res[0].Tokens, res[0].Bytes, want, len(text), got[:min(80, len(got))])
		}
		code, out, _ = runParley(t, text, "tokens", "--encoding", enc)
		if code != 0 || out != want+"\n" {
			t.Fatalf("%s standard input: code %d, stdout %q, want %s", enc, code, out, want)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
