package termmd

import (
	"strings"
)

// table lays a GFM table out in columns separated by "│", the header in
// bold over a rule. Columns too wide for the terminal share what is left
// and wrap their cells.
func (r *renderer) table(t *block, width int) []string {
	var rows [][]string
	const header = 0
	for _, row := range t.rows {
		var cells []string
		for _, c := range row {
			cells = append(cells, r.inlines(parseInline(c), ""))
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
				parts[i] = align(s, widths[i], t.aligns[i])
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

// align pads s to width: a is 'r' (right), 'c' (centre) or left.
func align(s string, width int, a byte) string {
	pad := width - Width(s)
	if pad <= 0 {
		return s
	}
	switch a {
	case 'r':
		return strings.Repeat(" ", pad) + s
	case 'c':
		return strings.Repeat(" ", pad/2) + s + strings.Repeat(" ", pad-pad/2)
	}
	return s + strings.Repeat(" ", pad)
}
