package termmd

import (
	"strings"

	east "github.com/yuin/goldmark/extension/ast"
)

// table lays a GFM table out in columns separated by "│", the header in
// bold over a rule. Columns too wide for the terminal share what is left
// and wrap their cells.
func (r *renderer) table(t *east.Table, width int) []string {
	var rows [][]string
	header := -1
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		if _, ok := row.(*east.TableHeader); ok {
			header = len(rows)
		}
		var cells []string
		for c := row.FirstChild(); c != nil; c = c.NextSibling() {
			cells = append(cells, r.inlines(c, ""))
		}
		rows = append(rows, cells)
	}
	cols := 0
	for _, row := range rows {
		cols = max(cols, len(row))
	}
	if cols == 0 {
		return nil
	}
	widths := make([]int, cols)
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], Width(c))
		}
	}
	fitColumns(widths, width-3*(cols-1))
	sep := r.style(sDim, " │ ")
	var out []string
	for ri, row := range rows {
		cells := make([][]string, cols)
		height := 1
		for i := range cols {
			text := ""
			if i < len(row) {
				text = row[i]
			}
			if ri == header && r.colour {
				text = r.style(sBold, text)
			}
			cells[i] = wrap(text, widths[i])
			if text == "" {
				cells[i] = []string{""}
			}
			height = max(height, len(cells[i]))
		}
		for l := range height {
			parts := make([]string, cols)
			for i := range cols {
				s := ""
				if l < len(cells[i]) {
					s = cells[i][l]
				}
				parts[i] = align(s, widths[i], alignment(t, i))
			}
			out = append(out, strings.TrimRight(strings.Join(parts, sep), " "))
		}
		if ri == header {
			rule := make([]string, cols)
			for i, w := range widths {
				rule[i] = strings.Repeat("─", w)
			}
			out = append(out, r.style(sDim, strings.Join(rule, "─┼─")))
		}
	}
	return out
}

// fitColumns shrinks the widest columns until they fit in room, keeping
// each at least 6 wide.
func fitColumns(widths []int, room int) {
	total := 0
	for _, w := range widths {
		total += w
	}
	for total > room {
		widest := 0
		for i, w := range widths {
			if w > widths[widest] {
				widest = i
			}
		}
		if widths[widest] <= 6 {
			return
		}
		widths[widest]--
		total--
	}
}

func alignment(t *east.Table, col int) east.Alignment {
	if col < len(t.Alignments) {
		return t.Alignments[col]
	}
	return east.AlignNone
}

func align(s string, width int, a east.Alignment) string {
	pad := width - Width(s)
	if pad <= 0 {
		return s
	}
	switch a {
	case east.AlignRight:
		return strings.Repeat(" ", pad) + s
	case east.AlignCenter:
		return strings.Repeat(" ", pad/2) + s + strings.Repeat(" ", pad-pad/2)
	}
	return s + strings.Repeat(" ", pad)
}
