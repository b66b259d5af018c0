package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parleyhq/parley/bench"
)

// benchCLI runs `parley ARGS` in-process and returns the exit code and both outputs.
func benchCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	code = dispatch(context.Background(), e, args)
	return code, out.String(), errb.String()
}

type formatsJSON struct {
	Readers int `json:"readers"`
	Rows    []struct {
		Message       string  `json:"message"`
		Format        string  `json:"format"`
		Encoding      string  `json:"encoding"`
		Tokens        int     `json:"tokens"`
		TokensPerFact float64 `json:"tokens_per_fact"`
	} `json:"rows"`
	Threads []struct {
		Format   string `json:"format"`
		Encoding string `json:"encoding"`
		Tokens   int    `json:"tokens"`
	} `json:"threads"`
	Grammar []struct {
		Format    string `json:"format"`
		Encoding  string `json:"encoding"`
		Grammar   int    `json:"grammar_tokens"`
		Tax       int    `json:"tax_tokens"`
		BreakEven *int   `json:"break_even_messages"`
	} `json:"grammar"`
	Constructs []struct {
		Construct string `json:"construct"`
		Encoding  string `json:"encoding"`
		Tokens    int    `json:"tokens"`
	} `json:"constructs"`
}

func TestBenchFormatsJSON(t *testing.T) {
	code, out, errs := benchCLI(t, "bench", "formats", "--json", "--readers", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res formatsJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if res.Readers != 3 {
		t.Errorf("readers %d, want 3", res.Readers)
	}
	// 3 messages × 7 formats × 2 encodings.
	if len(res.Rows) != 42 || len(res.Threads) != 14 || len(res.Grammar) != 14 || len(res.Constructs) != 2*len(bench.Constructs()) {
		t.Errorf("%d rows, %d threads, %d grammar rows, %d constructs", len(res.Rows), len(res.Threads), len(res.Grammar), len(res.Constructs))
	}
	// The study's own convention messages count exactly what it published.
	want := map[string]int{"p2": 127, "p3": 147}
	found := 0
	for _, r := range res.Rows {
		if r.Format == "convention" && r.Encoding == "o200k_base" && want[r.Message] != 0 {
			found++
			if r.Tokens != want[r.Message] {
				t.Errorf("%s convention: %d tokens in o200k_base, want %d", r.Message, r.Tokens, want[r.Message])
			}
			if r.TokensPerFact != float64(int(float64(r.Tokens)/13*100+0.5))/100 {
				t.Errorf("%s convention: %v tokens per fact for %d tokens and 13 facts", r.Message, r.TokensPerFact, r.Tokens)
			}
		}
	}
	if found != 2 {
		t.Errorf("found %d of the p2/p3 convention rows", found)
	}
	// a2c joins with a row for every message under both encodings; the command renders it
	// only after decoding the payload and comparing it with message.json.
	a2cRows := map[string]bool{}
	for _, r := range res.Rows {
		if r.Format == "a2c" && r.Tokens > 0 {
			a2cRows[r.Message+"/"+r.Encoding] = true
		}
	}
	for _, m := range []string{"p1", "p2", "p3"} {
		for _, enc := range []string{"o200k_base", "cl100k_base"} {
			if !a2cRows[m+"/"+enc] {
				t.Errorf("no a2c row for %s under %s", m, enc)
			}
		}
	}
	for _, g := range res.Grammar {
		if g.Tax != (res.Readers+1)*g.Grammar {
			t.Errorf("%s/%s: tax %d for a %d-token grammar and %d readers", g.Format, g.Encoding, g.Tax, g.Grammar, res.Readers)
		}
		if g.Format == "convention" && (g.Grammar == 0 || g.BreakEven == nil) {
			t.Errorf("convention grammar row %+v", g)
		}
		if g.Format == "a2c" && (g.Grammar == 0 || g.Grammar > 100) {
			t.Errorf("a2c grammar row %+v: the decode instructions are short but not empty", g)
		}
	}
}

func TestBenchFormatsText(t *testing.T) {
	code, out, errs := benchCLI(t, "bench", "formats")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"# Format study",
		"## Tokens per message, o200k_base",
		"## Tokens per message, cl100k_base",
		"## Grammar tax and break-even, 5 readers",
		"## Construct costs",
		"| convention     | 125 | 127 | 147 |    399 |",
		"| a2c/2          | ",
		"Note: a2c/2 takes ",
		"a2c's decode instructions (bench.A2CGrammar)",
		"| 2026-09-19T12:00:00Z ",
		"the copy built into parley", // tests run in cmd/parley, where ../shared/study is absent
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestBenchFormatsSVG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "formats.svg")
	code, _, errs := benchCLI(t, "bench", "formats", "--json", "--svg", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	rects := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		if el, ok := tok.(xml.StartElement); ok && el.Name.Local == "rect" {
			rects++
		}
	}
	// A background, two legend swatches and 7 formats × 2 encodings bars.
	if rects != 1+2+14 {
		t.Errorf("%d rects in the chart, want 17", rects)
	}
	if !strings.Contains(string(data), `role="img"`) || !strings.Contains(errs, "wrote "+path) {
		t.Errorf("chart lacks role=img or the command did not say it wrote it (stderr %q)", errs)
	}
}

// TestBenchFormatsStudyFolder checks the folder choice: ../shared/study when it exists,
// --study when given.
func TestBenchFormatsStudyFolder(t *testing.T) {
	root := t.TempDir()
	study := filepath.Join(root, "shared", "study")
	// A one-message study: p2 alone, copied from the embedded fixtures.
	err := fs.WalkDir(bench.EmbeddedStudy(), "p2", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(bench.EmbeddedStudy(), p)
		if err != nil {
			return err
		}
		dst := filepath.Join(study, p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(root, "main")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)
	code, out, errs := benchCLI(t, "bench", "formats")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "study: ../shared/study; 1 messages (p2), 13 facts") {
		t.Errorf("did not use ../shared/study:\n%s", out)
	}
	code, out, errs = benchCLI(t, "bench", "formats", "--study", study, "--json")
	if code != 0 || !strings.Contains(out, `"message": "p2"`) || strings.Contains(out, `"message": "p1"`) {
		t.Errorf("--study: exit %d, stderr %s", code, errs)
	}
}

func TestBenchErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no subcommand", []string{"bench"}, 2, "a subcommand is required"},
		{"unknown subcommand", []string{"bench", "nope"}, 2, `unknown bench subcommand "nope"`},
		{"server without seats", []string{"bench", "server", "--seats", "0"}, 2, "--seats must be 1..1000"},
		{"bad readers", []string{"bench", "formats", "--readers", "0"}, 2, "--readers must be at least 1"},
		{"stray argument", []string{"bench", "formats", "extra"}, 2, `unexpected argument "extra"`},
		{"missing study", []string{"bench", "formats", "--study", "/nonexistent/study"}, 1, "study folder"},
		{"study without messages", []string{"bench", "formats", "--study", os.TempDir()}, 1, "no message folders"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errs := benchCLI(t, tt.args...)
			if code != tt.code || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errs, tt.code, tt.want)
			}
		})
	}
}

func TestBenchHelp(t *testing.T) {
	code, out, _ := benchCLI(t, "bench", "--help")
	if code != 0 || !strings.Contains(out, "formats") || !strings.Contains(out, "server") {
		t.Errorf("bench --help: exit %d\n%s", code, out)
	}
	code, out, _ = benchCLI(t, "bench", "formats", "--help")
	if code != 0 || !strings.Contains(out, "Examples:") || !strings.Contains(out, "--readers") {
		t.Errorf("bench formats --help: exit %d\n%s", code, out)
	}
}

func TestA2CNote(t *testing.T) {
	res := func(a2c, min, grammar int) *bench.Results {
		return &bench.Results{
			Threads: []bench.Thread{{Format: "json-min", Encoding: "e", Tokens: min}, {Format: "a2c", Encoding: "e", Tokens: a2c}},
			Grammar: []bench.GrammarRow{{Format: "a2c", Encoding: "e", GrammarTokens: grammar}},
		}
	}
	for _, tt := range []struct {
		a2c, min, grammar int
		want              string
	}{
		{583, 579, 33, "minified JSON 579 (+4): on these single small JSON objects\na2c is dearer than minified JSON even before its 33-token grammar."},
		{581, 590, 34, "minified JSON 590 (-9); with its 34-token grammar held by a reader,\na2c costs more"},
		{500, 590, 34, "it is cheaper than minified JSON even with\nits 34-token grammar."},
	} {
		if got := a2cNote(res(tt.a2c, tt.min, tt.grammar), "e"); !strings.Contains(got, tt.want) {
			t.Errorf("note %q lacks %q", got, tt.want)
		}
	}
	if got := a2cNote(res(1, 2, 3), "other"); got != "" {
		t.Errorf("a note for an encoding without a2c: %q", got)
	}
}
