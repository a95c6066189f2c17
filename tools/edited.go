package tools

import (
	"fmt"
	"strings"

	"github.com/aymanbagabas/go-udiff"
)

// After an edit the model reads the lines it changed, numbered as read_file
// numbers them, with a little context: it sees at once whether the change
// landed as meant (indentation, a duplicated line) and has the new line
// numbers without reading the file again.

const (
	// shownContext lines are shown around each changed region.
	shownContext = 2
	// maxShownLines bounds the lines shown per file.
	maxShownLines = 60
)

// hunk is one changed place of a file: the lines of the new content it
// covers and how many lines it removed and added. A pure deletion covers
// the line after it, where it was.
type hunk struct {
	span
	removed, added int
	old            string // the lines removed
}

// changedSpans returns the lines of after (1-based, inclusive) that differ
// from before.
func changedSpans(before, after string) []span {
	hunks := changedHunks(before, after)
	out := make([]span, len(hunks))
	for i, h := range hunks {
		out[i] = h.span
	}
	return out
}

// changedHunks returns the places where after differs from before.
func changedHunks(before, after string) []hunk {
	var out []hunk
	delta := 0 // lines added minus lines removed so far
	for _, e := range udiff.Lines(before, after) {
		oldFirst := strings.Count(before[:e.Start], "\n") // 0-based
		oldN := strings.Count(before[e.Start:e.End], "\n")
		if e.End > e.Start && !strings.HasSuffix(before[e.Start:e.End], "\n") {
			oldN++
		}
		newN := strings.Count(e.New, "\n")
		if e.New != "" && !strings.HasSuffix(e.New, "\n") {
			newN++
		}
		first := oldFirst + delta + 1
		last := first + max(newN, 1) - 1
		out = append(out, hunk{span{first, last}, oldN, newN, before[e.Start:e.End]})
		delta += newN - oldN
	}
	return out
}

// showChange renders the changed lines of a file's new content with their
// context, at most maxShownLines, and returns the lines it showed.
func showChange(rel, content string, changed []span) (string, []span) {
	lines := strings.Split(strings.TrimSuffix(strings.ReplaceAll(content, "\r\n", "\n"), "\n"), "\n")
	if content == "" || len(changed) == 0 {
		return "", nil
	}
	var windows []span
	for _, c := range changed {
		w := span{max(1, c.first-shownContext), min(len(lines), c.last+shownContext)}
		if w.first > w.last {
			continue
		}
		if n := len(windows); n > 0 && w.first <= windows[n-1].last+1 {
			windows[n-1].last = max(windows[n-1].last, w.last)
			continue
		}
		windows = append(windows, w)
	}
	var b strings.Builder
	var shown []span
	budget := maxShownLines
	for i, w := range windows {
		if budget <= 0 {
			fmt.Fprintf(&b, "[… %d more changed places not shown; read_file shows them]\n", len(windows)-i)
			break
		}
		if i > 0 {
			b.WriteString("   ...\n")
		}
		last := min(w.last, w.first+budget-1)
		b.WriteString(numbered(lines[w.first-1:last], w.first))
		if last < w.last {
			fmt.Fprintf(&b, "[… lines %d-%d of this change not shown; read_file with offset %d shows them]\n", last+1, w.last, last+1)
		}
		shown = append(shown, span{w.first, last})
		budget -= last - w.first + 1
	}
	parts := make([]string, len(shown))
	for i, s := range shown {
		parts[i] = s.String()
	}
	what := "Line"
	if len(shown) > 1 || shown[0].first != shown[0].last {
		what = "Lines"
	}
	return fmt.Sprintf("%s %s of %s now read:\n%s", what, strings.Join(parts, ", "), rel, b.String()), shown
}
