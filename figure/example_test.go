package figure_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/parleyhq/parley/figure"
)

func ExampleTable_Markdown() {
	t := figure.Table{
		Header: []string{"format", "thread tokens"},
		Rows:   [][]string{{"convention", "399"}, {"JSON, pretty", "859"}},
		Align:  []figure.Align{figure.Left, figure.Right},
	}
	fmt.Print(t.Markdown())
	// Output:
	// | format       | thread tokens |
	// | ------------ | ------------: |
	// | convention   |           399 |
	// | JSON, pretty |           859 |
}

func ExampleBarChart_WriteSVG() {
	c := figure.BarChart{
		Title: "Tokens per fact",
		Unit:  "tokens per fact",
		Bars: []figure.Bar{
			{Label: "convention", Group: "o200k_base", Value: 10.23},
			{Label: "convention", Group: "cl100k_base", Value: 10.41},
			{Label: "JSON", Group: "o200k_base", Value: 22.03},
			{Label: "JSON", Group: "cl100k_base", Value: 22.05},
		},
	}
	var b strings.Builder
	if err := c.WriteSVG(&b); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	// The first lines: the accessible root, its title and the data in words.
	lines := strings.Split(b.String(), "\n")
	fmt.Println(lines[1])
	fmt.Println(lines[2])
	// Output:
	// <title>Tokens per fact</title>
	// <desc>Horizontal bar chart of tokens per fact. convention: o200k_base 10.23, cl100k_base 10.41; JSON: o200k_base 22.03, cl100k_base 22.05.</desc>
}

func ExampleLineChart_WriteSVG() {
	c := figure.LineChart{
		Title:  "Best full cost per optimisation cycle",
		XLabel: "cycle",
		YLabel: "tokens",
		Step:   true,
		Series: []figure.Series{{Name: "train", Points: []figure.Point{{X: 1, Y: 5120}, {X: 2, Y: 4870}, {X: 3, Y: 4611}}}},
	}
	var b strings.Builder
	if err := c.WriteSVG(&b); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	fmt.Println(strings.Split(b.String(), "\n")[2])
	// Output:
	// <desc>Step chart of tokens against cycle. train: (1, 5120), (2, 4870), (3, 4611).</desc>
}
