package figure

import (
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"
)

// Bar is one measured value. Bars that share a Label are drawn together; Group names the
// series a bar belongs to (e.g. a tokenizer), and is empty when there is only one series.
type Bar struct {
	Label string
	Value float64
	Group string
}

// BarChart is a horizontal bar chart: one row per label, one bar per group within the row,
// each bar labelled with its value. Labels and groups appear in the order of their first
// bar, so the caller decides the order.
type BarChart struct {
	Title string
	// Unit names what the values measure ("tokens per fact"); it labels the value axis.
	Unit string
	Bars []Bar
	// Width is the SVG width in pixels; 0 means 720.
	Width int
}

// Bar layout, in pixels.
const (
	barH      = 16.0
	barGap    = 2.0
	rowGap    = 12.0
	valueRoom = 64.0
	axisRoom  = 44.0
)

// WriteSVG writes the chart as a standalone SVG document.
func (c BarChart) WriteSVG(w io.Writer) error {
	for _, b := range c.Bars {
		if !finite(b.Value) {
			return fmt.Errorf("report: bar %q/%q has no finite value", b.Label, b.Group)
		}
	}
	labels, groups := order(c.Bars)
	value := map[[2]string]float64{}
	has := map[[2]string]bool{}
	lo, hi := 0.0, 0.0
	for _, b := range c.Bars {
		k := [2]string{b.Label, b.Group}
		value[k], has[k] = b.Value, true
		lo, hi = math.Min(lo, b.Value), math.Max(hi, b.Value)
	}
	ax := niceAxis(lo, hi)

	width := float64(c.Width)
	if width <= 0 {
		width = defaultW
	}
	labelW := 0.0
	for _, l := range labels {
		labelW = math.Max(labelW, float64(utf8.RuneCountInString(truncate(l, maxLabelCh)))*charWidth)
	}
	left := 12 + labelW + 10
	if lo < 0 {
		left += valueRoom // room for the value printed left of a negative bar
	}
	right := width - valueRoom
	if right-left < 120 { // keep a usable plot however long the labels are
		right = left + 120
		width = right + valueRoom
	}
	top := titleH + 8
	named := len(groups) > 1 || len(groups) == 1 && groups[0] != ""
	if named {
		top += 22
	}
	rowH := float64(len(groups))*(barH+barGap) - barGap + rowGap
	plotH := float64(len(labels)) * rowH
	height := top + plotH + axisRoom

	d := &svgDoc{}
	d.open(width, height, c.Title, "Bar chart", c.describe(labels, groups, value, has))
	if named {
		d.legend(left, titleH+14, groups, false)
	}
	// Grid and tick labels.
	d.printf(`<g aria-hidden="true">` + "\n")
	for _, t := range ax.ticks {
		x := ax.pos(t, left, right)
		d.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#dddddd"/>`+"\n", num(x), num(top-4), num(x), num(top+plotH))
		d.text(x, top+plotH+16, "middle", "#555555", tickLabel(t))
	}
	if c.Unit != "" {
		d.text((left+right)/2, top+plotH+34, "middle", "#333333", c.Unit)
	}
	d.printf("</g>\n")
	zero := ax.pos(0, left, right)
	for i, l := range labels {
		y := top + float64(i)*rowH
		d.printf(`<g>` + "\n")
		d.text(left-10, y+(rowH-rowGap)/2+4, "end", "#111111", truncate(l, maxLabelCh))
		for j, g := range groups {
			k := [2]string{l, g}
			if !has[k] {
				continue
			}
			v := value[k]
			by := y + float64(j)*(barH+barGap)
			x0, x1 := zero, ax.pos(v, left, right)
			if x1 < x0 {
				x0, x1 = x1, x0
			}
			tip := l
			if g != "" {
				tip += ", " + g
			}
			tip += ": " + withUnit(v, c.Unit)
			d.printf(`<rect x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s</title></rect>`+"\n",
				num(x0), num(by), num(math.Max(x1-x0, 0.5)), num(barH), palette[j%len(palette)], esc(tip))
			if v < 0 {
				d.text(x0-4, by+barH-4, "end", "#111111", FormatValue(v))
			} else {
				d.text(x1+4, by+barH-4, "start", "#111111", FormatValue(v))
			}
		}
		d.printf("</g>\n")
	}
	d.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#555555" aria-hidden="true"/>`+"\n", num(zero), num(top-4), num(zero), num(top+plotH))
	d.close()
	_, err := io.WriteString(w, d.b.String())
	return err
}

// describe states the chart's data in words for <desc>.
func (c BarChart) describe(labels, groups []string, value map[[2]string]float64, has map[[2]string]bool) string {
	if len(labels) == 0 {
		return "Horizontal bar chart with no data."
	}
	var b strings.Builder
	b.WriteString("Horizontal bar chart")
	if c.Unit != "" {
		b.WriteString(" of " + c.Unit)
	}
	b.WriteString(". ")
	for i, l := range labels {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(l + ":")
		first := true
		for _, g := range groups {
			k := [2]string{l, g}
			if !has[k] {
				continue
			}
			if !first {
				b.WriteString(",")
			}
			first = false
			if g != "" {
				b.WriteString(" " + g)
			}
			b.WriteString(" " + FormatValue(value[k]))
		}
	}
	b.WriteString(".")
	return b.String()
}

func withUnit(v float64, unit string) string {
	if unit == "" {
		return FormatValue(v)
	}
	return FormatValue(v) + " " + unit
}

// order returns the distinct labels and groups in order of first appearance.
func order(bars []Bar) (labels, groups []string) {
	seenL, seenG := map[string]bool{}, map[string]bool{}
	for _, b := range bars {
		if !seenL[b.Label] {
			seenL[b.Label] = true
			labels = append(labels, b.Label)
		}
		if !seenG[b.Group] {
			seenG[b.Group] = true
			groups = append(groups, b.Group)
		}
	}
	return labels, groups
}
