package web

import (
	"strconv"

	"github.com/parleyhq/parley"
)

// chart is a horizontal bar chart laid out on the server, drawn as inline SVG by the stats
// template: no script, so it reads the same with JavaScript off, and each bar carries its
// number as text.
type chart struct {
	ID      string
	Title   string
	Desc    string
	Unit    string
	Bars    []bar
	Width   int
	Height  int
	LabelW  int // width of the label column
	Empty   string
	Summary string
}

type bar struct {
	Label  string
	Value  string // formatted
	Y      int
	X      int // where the bar starts
	LabelX int // where the right-aligned label ends
	W      int // bar length in px
	TextX  int
	Class  string
}

const (
	chartWidth  = 560
	chartLabelW = 120
	barHeight   = 24
	barGap      = 10
	valueRoom   = 120 // room right of the longest bar for its number
)

// layout places bars for values (in the given order) scaled to the largest.
func layout(id, title, desc, unit string, labels []string, values []float64, format func(float64) string, classes []string) *chart {
	c := &chart{ID: id, Title: title, Desc: desc, Unit: unit, Width: chartWidth, LabelW: chartLabelW}
	var top float64
	for _, v := range values {
		top = max(top, v)
	}
	span := float64(chartWidth - chartLabelW - valueRoom)
	for i, v := range values {
		w := 0
		if top > 0 {
			w = int(v / top * span)
		}
		if v > 0 && w < 2 {
			w = 2 // a non-zero value stays visible
		}
		b := bar{Label: labels[i], Value: format(v), Y: i * (barHeight + barGap), X: chartLabelW, LabelX: chartLabelW - 8, W: w, TextX: chartLabelW + w + 8, Class: "bar"}
		if classes != nil {
			b.Class += " " + classes[i]
		}
		c.Bars = append(c.Bars, b)
	}
	c.Height = max(len(values)*(barHeight+barGap)-barGap, barHeight)
	return c
}

func tokensFmt(v float64) string { return group(int64(v+0.5)) + " tok" }

// perSeat is a chart of one per-seat counter, largest first.
func perSeat(id, title, desc string, m map[string]int64, empty string) *chart {
	keys := sortedKeys(m)
	values := make([]float64, len(keys))
	for i, k := range keys {
		values[i] = float64(m[k])
	}
	c := layout(id, title, desc, "tokens", keys, values, tokensFmt, nil)
	if len(keys) == 0 {
		c.Empty = empty
	}
	return c
}

// statsCharts turns a room's stats into the stats page's charts.
func statsCharts(st *parley.RoomStats) []*chart {
	posted := perSeat("posted", "Tokens posted, by seat",
		"What each seat's messages cost in o200k_base tokens.", st.TokensPosted, "Nothing posted yet.")
	dedup := perSeat("dedup", "Kept out by dedup, by seat",
		"Tokens of repeated messages the server refused instead of storing and serving again.", st.DedupTokens,
		"No repeats refused: nobody sent the same message twice.")
	read := perSeat("read", "History served, by seat",
		"Tokens of history each seat read: the input they paid for.", st.ReadTokens, "Nobody has read yet.")

	cp := st.CacheProjection
	cache := layout("cache", "Prompt-cache projection",
		"Input cost of the reads above, in token-equivalents, if every read were paid in full and if the byte-stable history prefix is billed at the cached rate.",
		"token-equivalents",
		[]string{"without cache", "with cache"}, []float64{cp.UncachedCost, cp.CachedCost}, tokensFmt,
		[]string{"bar-plain", "bar-cached"})
	if cp.ReadTokens == 0 {
		cache.Empty = "No reads yet, so nothing to project."
	} else {
		rate := strconv.FormatFloat(cp.CachedPriceRate, 'g', 3, 64)
		cache.Summary = "Saving " + group(int64(cp.Saving+0.5)) + " token-equivalents: " +
			group(cp.CachedTokens) + " of " + group(cp.ReadTokens) + " tokens read could come from the cache, at " + rate + "× the price."
	}
	return []*chart{posted, dedup, read, cache}
}
