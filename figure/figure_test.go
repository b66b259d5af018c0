package figure

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden SVG files in testdata")

func TestTableMarkdown(t *testing.T) {
	tests := []struct {
		name  string
		table Table
		want  string
	}{
		{
			name: "aligned",
			table: Table{
				Header: []string{"format", "tokens", "per fact"},
				Rows:   [][]string{{"convention", "414", "10.62"}, {"JSON", "659", "16.9"}},
				Align:  []Align{Left, Right, Right},
			},
			want: "" +
				"| format     | tokens | per fact |\n" +
				"| ---------- | -----: | -------: |\n" +
				"| convention |    414 |    10.62 |\n" +
				"| JSON       |    659 |     16.9 |\n",
		},
		{
			name: "centre, short rows, pipes and newlines",
			table: Table{
				Header: []string{"a", "b"},
				Rows:   [][]string{{"x|y"}, {"1", "two\nlines"}},
				Align:  []Align{Center},
			},
			want: "" +
				"|  a   | b         |\n" +
				"| :--: | --------- |\n" +
				"| x\\|y |           |\n" +
				"|  1   | two lines |\n",
		},
		{
			name:  "unicode counts runes",
			table: Table{Header: []string{"k", "n"}, Rows: [][]string{{"⏰", "3"}, {"café", "2"}}},
			want: "" +
				"| k    | n   |\n" +
				"| ---- | --- |\n" +
				"| ⏰    | 3   |\n" +
				"| café | 2   |\n",
		},
		{name: "empty", table: Table{}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.table.Markdown(); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestFormatValue(t *testing.T) {
	tests := map[float64]string{0: "0", 414: "414", -3: "-3", 10.615: "10.62", 16.9: "16.90", 0.5: "0.50", 1e20: "100000000000000000000.00"}
	for in, want := range tests {
		if got := FormatValue(in); got != want {
			t.Errorf("FormatValue(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestNiceAxis(t *testing.T) {
	tests := []struct {
		lo, hi     float64
		wantLo     float64
		wantHi     float64
		wantTicks  int
		firstTicks []float64
	}{
		{0, 16.9, 0, 20, 5, []float64{0, 5, 10}},
		{0, 659, 0, 800, 5, []float64{0, 200}},
		{-3, 7, -4, 8, 7, []float64{-4, -2, 0}},
		{0, 0, 0, 1, 6, []float64{0, 0.2, 0.4}},
		{5, 5, 2, 8, 7, []float64{2, 3}},
		{0.1, 0.3, 0.1, 0.3, 5, []float64{0.1, 0.15, 0.2}},
	}
	for _, tt := range tests {
		a := niceAxis(tt.lo, tt.hi)
		if a.lo != tt.wantLo || a.hi != tt.wantHi || len(a.ticks) != tt.wantTicks {
			t.Errorf("niceAxis(%v, %v) = [%v, %v] with %d ticks %v; want [%v, %v] with %d",
				tt.lo, tt.hi, a.lo, a.hi, len(a.ticks), a.ticks, tt.wantLo, tt.wantHi, tt.wantTicks)
			continue
		}
		for i, want := range tt.firstTicks {
			if a.ticks[i] != want {
				t.Errorf("niceAxis(%v, %v) tick %d = %v, want %v", tt.lo, tt.hi, i, a.ticks[i], want)
			}
		}
	}
}

// charts are the SVG fixtures: each is written, checked for well-formed XML and the
// accessibility attributes, and compared with its golden file.
var charts = map[string]interface{ WriteSVG(io.Writer) error }{
	"bar-single": BarChart{
		Title: "Thread tokens by format (o200k_base)",
		Unit:  "tokens",
		Bars: []Bar{
			{Label: "convention", Value: 399}, {Label: "AACP", Value: 422},
			{Label: "prose", Value: 631}, {Label: "JSON, pretty", Value: 859},
		},
	},
	"bar-grouped": BarChart{
		Title: "Tokens per fact by format",
		Unit:  "tokens per fact",
		Bars: []Bar{
			{Label: "convention", Group: "o200k_base", Value: 10.23}, {Label: "convention", Group: "cl100k_base", Value: 10.41},
			{Label: "JSON <pretty> & \"raw\"", Group: "o200k_base", Value: 22.03}, {Label: "JSON <pretty> & \"raw\"", Group: "cl100k_base", Value: 22.05},
			{Label: "only one series here", Group: "cl100k_base", Value: 3},
		},
	},
	"bar-negative": BarChart{
		Title: "Saving per message against pretty JSON",
		Unit:  "tokens",
		Bars:  []Bar{{Label: "TOON", Value: 61.5}, {Label: "prose", Value: 76}, {Label: "a format that costs more", Value: -12}},
	},
	"bar-empty": BarChart{Title: "Nothing measured"},
	"line": LineChart{
		Title: "Cumulative tokens per reader", XLabel: "messages", YLabel: "tokens",
		Series: []Series{
			{Name: "JSON", Points: []Point{{0, 0}, {1, 286}, {2, 572}, {3, 858}}},
			{Name: "convention", Points: []Point{{0, 207}, {1, 340}, {2, 473}, {3, 606}}},
		},
		ZeroBased: true,
	},
	"step": LineChart{
		Title: "Best full cost per cycle", XLabel: "cycle", YLabel: "tokens",
		Series: []Series{{Name: "train", Points: []Point{{1, 5120}, {2, 4870}, {3, 4870}, {4, 4611}}}},
		Step:   true,
	},
}

func TestChartsSVG(t *testing.T) {
	for name, c := range charts {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := c.WriteSVG(&buf); err != nil {
				t.Fatal(err)
			}
			out := buf.Bytes()
			checkSVG(t, out)
			var again bytes.Buffer
			_ = c.WriteSVG(&again)
			if !bytes.Equal(out, again.Bytes()) {
				t.Error("two writes of the same chart differ")
			}
			golden := filepath.Join("testdata", name+".svg")
			if *update {
				if err := os.WriteFile(golden, out, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(out, want) {
				t.Errorf("%s differs from its golden file; run go test -update and review the diff", name)
			}
		})
	}
}

func TestBarChartContent(t *testing.T) {
	var buf bytes.Buffer
	if err := charts["bar-grouped"].WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	s := buf.String()
	for _, want := range []string{
		`aria-label="Tokens per fact by format"`,
		`<title>convention, o200k_base: 10.23 tokens per fact</title>`,
		`>22.05</text>`,
		`JSON &lt;pretty&gt; &amp; &quot;raw&quot;`,
		`<desc>Horizontal bar chart of tokens per fact. convention: o200k_base 10.23, cl100k_base 10.41;`,
		`>cl100k_base</text>`, // the legend
	} {
		if !strings.Contains(s, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	if n := strings.Count(s, "<rect x="); n != 5+2 { // five bars, two legend swatches
		t.Errorf("%d rects, want 7", n)
	}
}

func TestChartErrors(t *testing.T) {
	if err := (BarChart{Bars: []Bar{{Label: "x", Value: math.NaN()}}}).WriteSVG(io.Discard); err == nil {
		t.Error("a NaN bar was drawn")
	}
	if err := (LineChart{Series: []Series{{Points: []Point{{math.Inf(1), 0}}}}}).WriteSVG(io.Discard); err == nil {
		t.Error("an infinite point was drawn")
	}
	boom := errors.New("disk full")
	if err := charts["line"].WriteSVG(failWriter{boom}); !errors.Is(err, boom) {
		t.Errorf("write error %v, want %v", err, boom)
	}
}

type failWriter struct{ err error }

func (f failWriter) Write([]byte) (int, error) { return 0, f.err }

// checkSVG decodes the whole document as XML and checks the accessible root.
func checkSVG(tb testing.TB, data []byte) {
	tb.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	depth, roots := 0, 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatalf("not well-formed XML: %v\n%s", err, data)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
				attrs := map[string]string{}
				for _, a := range el.Attr {
					attrs[a.Name.Local] = a.Value
				}
				if el.Name.Local != "svg" || attrs["role"] != "img" || attrs["aria-label"] == "" {
					tb.Errorf("root element %v lacks svg role=img aria-label", el)
				}
			}
			depth++
		case xml.EndElement:
			depth--
		}
	}
	if roots != 1 {
		tb.Errorf("%d root elements, want 1", roots)
	}
	if !bytes.Contains(data, []byte("<title>")) || !bytes.Contains(data, []byte("<desc>")) {
		tb.Error("no <title> or <desc>")
	}
}

// FuzzBarChart checks that any labels and values give well-formed, accessible SVG.
func FuzzBarChart(f *testing.F) {
	f.Add("convention", "o200k_base", 10.5, "JSON", -3.0, "<&\"'>")
	f.Add("", "", 0.0, "\x00\ufffe", 1e300, "\xff")
	f.Fuzz(func(t *testing.T, l1, g1 string, v1 float64, l2 string, v2 float64, title string) {
		c := BarChart{Title: title, Unit: g1, Bars: []Bar{{l1, v1, g1}, {l2, v2, ""}, {l1, v2, "second"}}}
		var buf bytes.Buffer
		if err := c.WriteSVG(&buf); err != nil {
			if finite(v1, v2) {
				t.Fatalf("finite values refused: %v", err)
			}
			return
		}
		checkSVG(t, buf.Bytes())
		lc := LineChart{Title: title, XLabel: l1, YLabel: l2, Series: []Series{{g1, []Point{{v1, v2}, {v2, v1}}}}, Step: true}
		buf.Reset()
		if err := lc.WriteSVG(&buf); err == nil {
			checkSVG(t, buf.Bytes())
		}
	})
}
