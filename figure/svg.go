package figure

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// palette is the Okabe–Ito set, distinguishable with the common colour-vision deficiencies;
// the yellow that reads poorly on white comes last.
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#F0E442"}

// dashes tell line series apart without relying on colour.
var dashes = []string{"", "6 3", "2 3", "8 3 2 3"}

const (
	fontSize   = 12
	charWidth  = 7.0 // average advance of a 12px sans-serif glyph, for layout only
	titleH     = 34.0
	defaultW   = 720
	maxLabelCh = 40
)

// svgDoc accumulates one SVG document.
type svgDoc struct {
	b strings.Builder
}

func (d *svgDoc) printf(format string, args ...any) { fmt.Fprintf(&d.b, format, args...) }

// open writes the root element with its accessible name and description. An untitled
// chart is named by its kind, so that assistive technology never meets an empty name.
func (d *svgDoc) open(w, h float64, title, kind, desc string) {
	if strings.TrimSpace(esc(title)) == "" {
		title = kind
	}
	d.printf(`<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" role="img" aria-label="%s" font-family="system-ui, -apple-system, 'Segoe UI', sans-serif" font-size="%d">`+"\n",
		num(w), num(h), num(w), num(h), esc(title), fontSize)
	d.printf("<title>%s</title>\n<desc>%s</desc>\n", esc(title), esc(desc))
	d.printf(`<rect width="100%%" height="100%%" fill="#ffffff"/>` + "\n")
	d.printf(`<text x="%s" y="22" font-size="16" font-weight="bold" fill="#111111">%s</text>`+"\n", num(12), esc(title))
}

func (d *svgDoc) close() { d.printf("</svg>\n") }

// text writes a text element; anchor is start, middle or end.
func (d *svgDoc) text(x, y float64, anchor, fill, s string) {
	d.printf(`<text x="%s" y="%s" text-anchor="%s" fill="%s">%s</text>`+"\n", num(x), num(y), anchor, fill, esc(s))
}

// legend draws a swatch and name per series in one row at y, starting at x.
func (d *svgDoc) legend(x, y float64, names []string, line bool) {
	d.printf(`<g aria-hidden="true">` + "\n")
	for i, n := range names {
		c := palette[i%len(palette)]
		if line {
			d.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2"%s/>`+"\n",
				num(x), num(y-4), num(x+18), num(y-4), c, dashAttr(i))
			x += 24
		} else {
			d.printf(`<rect x="%s" y="%s" width="12" height="12" fill="%s"/>`+"\n", num(x), num(y-10), c)
			x += 18
		}
		d.text(x, y, "start", "#333333", n)
		x += float64(utf8.RuneCountInString(n))*charWidth + 20
	}
	d.printf("</g>\n")
}

func dashAttr(i int) string {
	if p := dashes[i%len(dashes)]; p != "" {
		return fmt.Sprintf(` stroke-dasharray="%s"`, p)
	}
	return ""
}

// esc escapes text for use in element content and double-quoted attributes.
func esc(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&quot;")
		case '\'':
			b.WriteString("&#39;")
		default:
			// XML 1.0 forbids most control characters even when escaped: drop them.
			if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0xFFFE || r == 0xFFFF || r == utf8.RuneError {
				continue
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

// num formats a coordinate with at most one decimal, so output is stable and short.
func num(f float64) string {
	return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64)
}

// FormatValue formats a measured value for a label: whole numbers without decimals, others
// with two. Charts and callers that want the same look in tables use it.
func FormatValue(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// truncate shortens a label for display; the full text stays in the mark's <title>.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// axis is a linear scale over [lo, hi] with evenly spaced round ticks.
type axis struct {
	lo, hi float64
	ticks  []float64
}

// niceAxis returns an axis covering [lo, hi] whose ends and ticks are round numbers
// (1, 2 or 5 times a power of ten), with about five intervals.
func niceAxis(lo, hi float64) axis {
	if hi < lo {
		lo, hi = hi, lo
	}
	if hi == lo {
		if hi == 0 {
			hi = 1
		} else {
			lo, hi = lo-math.Abs(lo)/2, hi+math.Abs(hi)/2
		}
	}
	step := niceStep((hi - lo) / 5)
	a := axis{lo: roundTo(math.Floor(lo/step)*step, step), hi: roundTo(math.Ceil(hi/step)*step, step)}
	for i := 0; ; i++ {
		v := a.lo + float64(i)*step
		if v > a.hi+step/2 {
			break
		}
		// Rounding to the step's precision keeps tick labels like 0.30000000000000004 out.
		a.ticks = append(a.ticks, roundTo(v, step))
	}
	return a
}

func niceStep(raw float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	switch f := raw / p; {
	case f <= 1:
		return p
	case f <= 2:
		return 2 * p
	case f <= 5:
		return 5 * p
	}
	return 10 * p
}

func roundTo(v, step float64) float64 {
	digits := max(0, -int(math.Floor(math.Log10(step))))
	s := math.Pow(10, float64(digits))
	return math.Round(v*s) / s
}

// pos maps v onto [from, to].
func (a axis) pos(v, from, to float64) float64 {
	return from + (v-a.lo)/(a.hi-a.lo)*(to-from)
}

// tickLabel formats a tick value compactly (axis ticks are round, so few digits suffice).
func tickLabel(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// finite reports whether every value can be drawn.
func finite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}
