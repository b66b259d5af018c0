// Package figure writes measurement results for people: aligned markdown tables and small
// hand-written SVG charts (horizontal bars, grouped bars, lines and steps). The benchmarks
// produce results as data; this package only lays them out.
//
// Every writer is deterministic: the same input gives the same bytes (no clocks, no map
// order, fixed number formatting), so reports can be committed and diffed. Charts are
// accessible: each SVG has role="img", an aria-label, a <title>, a <desc> that states the
// data in words, and a <title> on every mark so a pointer or screen reader can read values.
package figure

import (
	"strings"
	"unicode/utf8"
)

// Align is a column's alignment.
type Align int

// Column alignments. Numbers read best right-aligned.
const (
	Left Align = iota
	Right
	Center
)

// Table is a table of strings with a header row.
type Table struct {
	Header []string
	Rows   [][]string
	// Align gives each column's alignment; missing entries mean Left.
	Align []Align
}

// Markdown returns the table as GitHub-flavoured markdown, its columns padded to a common
// width so that it also reads well as plain text. Rows shorter than the header are padded
// with empty cells; a pipe inside a cell is escaped. The result ends with a newline.
func (t Table) Markdown() string {
	cols := len(t.Header)
	for _, r := range t.Rows {
		cols = max(cols, len(r))
	}
	if cols == 0 {
		return ""
	}
	cell := func(row []string, i int) string {
		if i < len(row) {
			return escapeCell(row[i])
		}
		return ""
	}
	align := func(i int) Align {
		if i < len(t.Align) {
			return t.Align[i]
		}
		return Left
	}
	width := make([]int, cols)
	for i := range cols {
		width[i] = 3 // the shortest delimiter cell, "---"
		width[i] = max(width[i], textWidth(cell(t.Header, i)))
		for _, r := range t.Rows {
			width[i] = max(width[i], textWidth(cell(r, i)))
		}
	}
	var b strings.Builder
	line := func(row []string) {
		b.WriteByte('|')
		for i := range cols {
			b.WriteByte(' ')
			b.WriteString(pad(cell(row, i), width[i], align(i)))
			b.WriteString(" |")
		}
		b.WriteByte('\n')
	}
	line(t.Header)
	b.WriteByte('|')
	for i := range cols {
		b.WriteByte(' ')
		switch align(i) {
		case Right:
			b.WriteString(strings.Repeat("-", width[i]-1) + ":")
		case Center:
			b.WriteString(":" + strings.Repeat("-", width[i]-2) + ":")
		default:
			b.WriteString(strings.Repeat("-", width[i]))
		}
		b.WriteString(" |")
	}
	b.WriteByte('\n')
	for _, r := range t.Rows {
		line(r)
	}
	return b.String()
}

func escapeCell(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// textWidth approximates the columns s takes in a monospaced font: one per rune. Wide
// characters (CJK, emoji) are off by one, which only shifts a column edge in the raw text.
func textWidth(s string) int { return utf8.RuneCountInString(s) }

func pad(s string, width int, a Align) string {
	gap := width - textWidth(s)
	if gap <= 0 {
		return s
	}
	switch a {
	case Right:
		return strings.Repeat(" ", gap) + s
	case Center:
		left := gap / 2
		return strings.Repeat(" ", left) + s + strings.Repeat(" ", gap-left)
	}
	return s + strings.Repeat(" ", gap)
}
