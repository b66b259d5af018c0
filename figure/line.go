package figure

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// Point is one (x, y) observation.
type Point struct {
	X, Y float64
}

// Series is a named sequence of points, drawn in the order given.
type Series struct {
	Name   string
	Points []Point
}

// LineChart plots one or more series against a shared pair of axes.
type LineChart struct {
	Title          string
	XLabel, YLabel string
	Series         []Series
	// Step draws each series as a staircase: a value holds until the next point, as a
	// best-so-far cost does from one optimisation cycle to the next.
	Step bool
	// ZeroBased starts the y axis at zero (when all values are positive); otherwise the
	// axis spans the data, which shows small differences between large values.
	ZeroBased bool
	// Width and Height are the SVG size in pixels; 0 means 720 by 400.
	Width, Height int
}

// WriteSVG writes the chart as a standalone SVG document.
func (c LineChart) WriteSVG(w io.Writer) error {
	first := true
	var xlo, xhi, ylo, yhi float64
	for _, s := range c.Series {
		for _, p := range s.Points {
			if !finite(p.X, p.Y) {
				return fmt.Errorf("report: series %q has a point that is not finite", s.Name)
			}
			if first {
				xlo, xhi, ylo, yhi = p.X, p.X, p.Y, p.Y
				first = false
				continue
			}
			xlo, xhi = math.Min(xlo, p.X), math.Max(xhi, p.X)
			ylo, yhi = math.Min(ylo, p.Y), math.Max(yhi, p.Y)
		}
	}
	if c.ZeroBased {
		ylo, yhi = math.Min(ylo, 0), math.Max(yhi, 0)
	}
	xa, ya := niceAxis(xlo, xhi), niceAxis(ylo, yhi)

	width, height := float64(c.Width), float64(c.Height)
	if width <= 0 {
		width = defaultW
	}
	if height <= 0 {
		height = 400
	}
	yTickW := 0.0
	for _, t := range ya.ticks {
		yTickW = math.Max(yTickW, float64(len(tickLabel(t)))*charWidth)
	}
	left := 12 + yTickW + 8
	if c.YLabel != "" {
		left += 18
	}
	right := width - 20
	top := titleH + 30
	bottom := height - 48
	if bottom-top < 80 {
		bottom = top + 80
		height = bottom + 48
	}
	px := func(x float64) float64 { return xa.pos(x, left, right) }
	py := func(y float64) float64 { return ya.pos(y, bottom, top) }

	d := &svgDoc{}
	d.open(width, height, c.Title, "Line chart", c.describe())
	names := make([]string, len(c.Series))
	for i, s := range c.Series {
		names[i] = s.Name
	}
	d.legend(left, titleH+14, names, true)

	d.printf(`<g aria-hidden="true">` + "\n")
	for _, t := range ya.ticks {
		y := py(t)
		d.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#dddddd"/>`+"\n", num(left), num(y), num(right), num(y))
		d.text(left-6, y+4, "end", "#555555", tickLabel(t))
	}
	for _, t := range xa.ticks {
		x := px(t)
		d.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#555555"/>`+"\n", num(x), num(bottom), num(x), num(bottom+4))
		d.text(x, bottom+18, "middle", "#555555", tickLabel(t))
	}
	d.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#555555"/>`+"\n", num(left), num(bottom), num(right), num(bottom))
	if c.XLabel != "" {
		d.text((left+right)/2, bottom+38, "middle", "#333333", c.XLabel)
	}
	if c.YLabel != "" {
		d.printf(`<text x="16" y="%s" text-anchor="middle" fill="#333333" transform="rotate(-90 16 %s)">%s</text>`+"\n",
			num((top+bottom)/2), num((top+bottom)/2), esc(c.YLabel))
	}
	d.printf("</g>\n")

	for i, s := range c.Series {
		color := palette[i%len(palette)]
		d.printf("<g>\n<title>%s</title>\n", esc(s.Name))
		if len(s.Points) > 0 {
			var pts []string
			for j, p := range s.Points {
				if c.Step && j > 0 {
					pts = append(pts, num(px(p.X))+","+num(py(s.Points[j-1].Y)))
				}
				pts = append(pts, num(px(p.X))+","+num(py(p.Y)))
			}
			d.printf(`<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n",
				strings.Join(pts, " "), color, dashAttr(i))
		}
		for _, p := range s.Points {
			d.printf(`<circle cx="%s" cy="%s" r="3" fill="%s"><title>%s: %s = %s, %s = %s</title></circle>`+"\n",
				num(px(p.X)), num(py(p.Y)), color, esc(s.Name), esc(orDefault(c.XLabel, "x")), FormatValue(p.X),
				esc(orDefault(c.YLabel, "y")), FormatValue(p.Y))
		}
		d.printf("</g>\n")
	}
	d.close()
	_, err := io.WriteString(w, d.b.String())
	return err
}

func (c LineChart) describe() string {
	kind := "Line chart"
	if c.Step {
		kind = "Step chart"
	}
	var b strings.Builder
	b.WriteString(kind)
	if c.YLabel != "" || c.XLabel != "" {
		fmt.Fprintf(&b, " of %s against %s", orDefault(c.YLabel, "y"), orDefault(c.XLabel, "x"))
	}
	b.WriteString(".")
	for _, s := range c.Series {
		fmt.Fprintf(&b, " %s:", s.Name)
		for j, p := range s.Points {
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " (%s, %s)", FormatValue(p.X), FormatValue(p.Y))
		}
		b.WriteString(".")
	}
	return b.String()
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
